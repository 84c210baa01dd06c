import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';
import type { Logger } from '../logger.ts';

export type RunningServer = { server: Server; url: string; close: () => Promise<void> };

/** Listens, and closes gracefully: stop accepting, let requests in flight finish, then cut the rest. */
export async function listen(app: RequestListener, host: string, port: number, graceMs: number, logger: Logger): Promise<RunningServer> {
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  let closing: Promise<void> | undefined;
  // During shutdown a keep-alive connection is ended once its response is out, so that the
  // process does not wait the whole grace period for clients to hang up.
  server.on('request', (req, res) => res.once('finish', () => closing && req.socket.end()));
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        logger.warn('grace period over: closing remaining connections', { grace_ms: graceMs });
        server.closeAllConnections();
      }, graceMs);
      timer.unref();
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      server.closeIdleConnections();
    }));
  return { server, url, close };
}

/**
 * Runs `stop` once on SIGTERM or SIGINT and exits; a second signal exits at once. Returns a
 * function that removes the listeners (tests start services in process).
 */
export function onShutdownSignal(stop: () => Promise<void>, logger: Logger): () => void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info('shutting down', { signal });
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
}

/**
 * The body of a service's main.ts: validate the configuration (print every problem and exit 1
 * when it is wrong), start, and stop gracefully on SIGTERM/SIGINT.
 */
export async function runService<C extends { LOG_LEVEL: string }>(
  name: string,
  load: () => C,
  start: (config: C, logger: Logger) => Promise<{ stop: () => Promise<void> }>,
  createLogger: (name: string, level: string) => Logger,
): Promise<void> {
  let config: C;
  try {
    config = load();
  } catch (error) {
    console.error(`${name}: ${(error as Error).message}`);
    process.exit(1);
  }
  const logger = createLogger(name, config.LOG_LEVEL);
  try {
    const service = await start(config, logger);
    onShutdownSignal(service.stop, logger);
  } catch (error) {
    logger.error('start failed', { error: (error as Error).message });
    process.exit(1);
  }
}
