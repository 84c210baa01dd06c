import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on a loopback port to `target`, for tests that make a server unreachable for one
 * service only: `cut()` closes the port and every connection through it (new ones are refused),
 * `hang()` does so too but then accepts connections and never answers them (a server that is
 * gone behind an address that still accepts), `restore()` forwards on the same port again.
 */
export type TcpProxy = { port: number; cut: () => Promise<void>; hang: () => Promise<void>; restore: () => Promise<void>; close: () => Promise<void> };

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  let server: Server | undefined;
  let port = 0;
  let forwarding = false;
  const open = (forward: boolean) =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        track(client);
        if (!forward) return;
        const upstream = connect(target.port, target.host);
        track(upstream);
        client.pipe(upstream).on('error', () => client.destroy());
        upstream.pipe(client).on('error', () => upstream.destroy());
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        forwarding = forward;
        resolve();
      });
    });
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await open(true);
  return {
    port,
    cut,
    hang: async () => {
      await cut();
      await open(false);
    },
    restore: async () => {
      if (server && forwarding) return;
      await cut();
      await open(true);
    },
    close: cut,
  };
}
