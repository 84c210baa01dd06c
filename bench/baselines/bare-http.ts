// Baselines of bench/entity-store.ts: `GET /livez` answered by a bare Express 5 app or a bare
// Node http server, each in a process of its own as the service is, with nothing else in the way
// (no routing by contract, no logging, no tracing). `tsx bench/baselines/bare-http.ts express|node <port>`.
import { createServer, type Server } from 'node:http';
import express from 'express';

const [kind, port] = [process.argv[2], Number(process.argv[3])];
const body = JSON.stringify({ status: 'ok' });

let server: Server;
if (kind === 'express') {
  const app = express();
  app.get('/livez', (_req, res) => {
    res.json({ status: 'ok' });
  });
  server = createServer(app);
} else if (kind === 'node') {
  server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/livez') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
    } else {
      res.writeHead(404).end();
    }
  });
} else {
  throw new Error('say express or node');
}
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
