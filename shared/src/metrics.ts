import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from './logger.ts';

export { Counter, Gauge, Histogram, Registry };

/**
 * A service's own registry of Prometheus metrics (docs/adr/0024-observability.md), with the
 * process's default metrics. Passed to whatever records a metric: two services in one process (the
 * tests) keep their figures apart.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * What the HTTP app records per request: its contract operationId (never the raw path), status,
 * duration and the database round trips it made (docs/adr/0031-http-hot-path.md).
 */
export type HttpMetrics = { observe: (operation: string, status: number, seconds: number, roundTrips: number) => void };

export function httpMetrics(registry: Registry): HttpMetrics {
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: "Time from a request's arrival to its answer, by the contract's operationId ('unmatched' for no route) and status",
    labelNames: ['operation', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const roundTrips = new Histogram({
    name: 'http_request_database_round_trips',
    help: "Database round trips of a request (a batch of statements sent together is one), by the contract's operationId",
    labelNames: ['operation'],
    buckets: [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20],
    registers: [registry],
  });
  return {
    observe: (operation, status, seconds, trips) => {
      duration.observe({ operation, status: String(status) }, seconds);
      roundTrips.observe({ operation }, trips);
    },
  };
}

/**
 * A gauge read when scraped. `read` may run a query: every gauge of one `snapshot` shares one call
 * per scrape (see `sharedRead`), and a failing read leaves the gauge out of that scrape instead of
 * failing all of them.
 */
export function sharedRead<T>(read: () => Promise<T>, logger: Logger, what: string): () => Promise<T | undefined> {
  let pending: Promise<T | undefined> | undefined;
  return () =>
    (pending ??= read()
      .catch((error: unknown) => {
        logger.warn(`metrics: ${what} could not be read`, { error: (error as Error).message });
        return undefined;
      })
      .finally(() => setImmediate(() => (pending = undefined))));
}

export type MetricsServer = { url: string; close: () => Promise<void> };

/**
 * `GET /metrics` in the Prometheus text format on a port of its own (METRICS_PORT), outside the
 * contract, its authentication and rate limits: the port is reached from inside the cluster only
 * (docs/adr/0024-observability.md). `host` is METRICS_HOST, not the interface's HOST: loopback
 * unless a deployment opens it to its scraper.
 */
export async function serveMetrics(registry: Registry, host: string, port: number, logger: Logger): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) => {
        logger.error('metrics could not be collected', { error: (error as Error).message });
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
