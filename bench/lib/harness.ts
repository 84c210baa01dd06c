// What every benchmark needs: Postgres and NATS (started here unless DATABASE_URL / NATS_URL name
// servers), a migrated database, the management service in its own process, a tenant and a token,
// and a way to record figures in bench/results/ and docs/benchmarks.md.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Knex } from 'knex';
import { Resources } from '@platform/shared';
import { createAccessKey, createTenant } from '@platform/management-service/admin/provisioning';
import { createBusCredential } from '@platform/management-service/admin/bus-credentials';
import { writeBusUsers } from '@platform/management-service/bus/sync';
import { freePort } from '@platform/dev-stack/ports';
import { startStack } from '@platform/dev-stack/stack';
import { cpuSeconds } from './cpu.ts';

export type BenchPlatform = {
  databaseUrl: string;
  natsUrl: string;
  /** The MQTT listener of the NATS server the harness started, with a bus credential of the tenant (none with NATS_URL). */
  mqttUrl?: string;
  db: Knex;
  managementUrl: string;
  /** The Prometheus endpoint (`/metrics`) of the service that answers `managementUrl`. */
  metricsUrl: string;
  /** CPU seconds used so far by the service that answers `managementUrl`, by the Postgres the harness started (0 with DATABASE_URL) and by this process. */
  cpu: { service: () => number; postgres: () => number; bench: () => number };
  tenantId: string;
  token: string;
  stop: () => Promise<void>;
};

const log = (line: string) => console.log(`[bench] ${line}`);

/** `replicas`: management service processes on the same database and NATS (the first answers `managementUrl`). */
export async function startBenchPlatform(
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  options: { replicas?: number } = {},
): Promise<BenchPlatform> {
  const resources = new Resources();
  return resources.build(async () => {
    const work = mkdtempSync(join(tmpdir(), 'platform-bench-'));
    chmodSync(work, 0o755);
    resources.add(work, (dir) => rmSync(dir, { recursive: true, force: true }));
    const postgresDir = process.env.DATABASE_URL ? undefined : join(work, 'pg');
    const metricsPort = await freePort();
    const stack = await startStack({
      log,
      resources,
      postgres: postgresDir ? { embedded: { dir: postgresDir, port: await freePort(), persistent: false } } : { url: process.env.DATABASE_URL! },
      database: { name: `bench_${process.pid}`, fresh: true },
      migrate: true,
      poolMax: 40,
      nats: process.env.NATS_URL
        ? { url: process.env.NATS_URL }
        : { own: { port: await freePort(), mqttPort: await freePort(), dir: join(work, 'nats'), name: 'platform-bench' } },
      services: {
        run: 'process',
        output: 'stderr',
        // Benchmarks on this harness drive the service with a closed loop of clients that saturates
        // it on purpose: what they measure is the cost of each request, not the admission of the
        // excess, which bench:load measures (docs/adr/0062-overload-shedding.md). A bench may set it.
        management: { replicas: options.replicas ?? 1, metricsPort, nodeArgs, env: { OVERLOAD_SHEDDING: 'false', ...env } },
      },
    });
    const { databaseUrl, natsUrl, db } = stack;
    const nats = stack.nats?.current();
    const managementUrl = stack.managementUrl!;
    const pids = stack.processes.management.map((service) => service.child().pid!);

    const tenantId = 'bench';
    await createTenant(db, { id: tenantId });
    const key = await createAccessKey(db, tenantId);
    // MQTT subscribers log in with a bus credential of the tenant (docs/adr/0026-bus-authorization.md).
    let mqttUrl: string | undefined;
    if (nats?.mqttUrl) {
      const bus = await createBusCredential(db, tenantId);
      if (await writeBusUsers(db, nats.users.file, nats.users.source)) nats.reload();
      const url = new URL(nats.mqttUrl);
      url.username = bus.username;
      url.password = bus.password;
      mqttUrl = url.toString();
    }
    const login = await fetch(`${managementUrl}/auth/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(key) });
    const { access_token: token } = (await login.json()) as { access_token: string };
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const cpu = {
      service: () => cpuSeconds(pids.slice(0, 1)),
      postgres: () => (postgresDir ? cpuSeconds([], postgresDir) : 0),
      bench: () => {
        const { user, system } = process.cpuUsage();
        return (user + system) / 1e6;
      },
    };
    return { databaseUrl, natsUrl, mqttUrl, db, managementUrl, metricsUrl, cpu, tenantId, token, stop: () => resources.closeAll() };
  });
}

export type Figures = { rps: number; p50_ms: number; p99_ms: number; errors: number };

/**
 * Database round trips per request of each operation so far, from the service's
 * `http_request_database_round_trips` histogram (sum / count by operationId).
 */
export async function roundTripsByOperation(metricsUrl: string): Promise<Map<string, { sum: number; count: number }>> {
  const text = await (await fetch(metricsUrl)).text();
  const byOperation = new Map<string, { sum: number; count: number }>();
  for (const match of text.matchAll(/^http_request_database_round_trips_(sum|count)\{([^}]*)\} (\S+)$/gm)) {
    const operation = /operation="([^"]*)"/.exec(match[2]!)?.[1] ?? '';
    const entry = byOperation.get(operation) ?? { sum: 0, count: 0 };
    entry[match[1] as 'sum' | 'count'] += Number(match[3]);
    byOperation.set(operation, entry);
  }
  return byOperation;
}

/** Runs `operation` from `concurrency` workers for `seconds`; throughput and latency percentiles. */
export async function closedLoop(concurrency: number, seconds: number, operation: (worker: number, i: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const t = performance.now();
        try {
          await operation(worker, i);
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return { rps: round(latencies.length / elapsed), p50_ms: at(0.5), p99_ms: at(0.99), errors };
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Writes bench/results/<name>.json and .md, and replaces the block of docs/benchmarks.md between its
 * markers. `docs`: what that page shows in place of the whole markdown (a pointer to results/, say),
 * its links relative to docs/.
 */
export function record(name: string, figures: unknown, markdown: string, options: { docs?: string } = {}): void {
  const results = new URL('../results/', import.meta.url).pathname;
  writeFileSync(`${results}${name}.json`, JSON.stringify(figures, null, 2) + '\n');
  writeFileSync(`${results}${name}.md`, markdown + '\n');
  const pagePath = new URL('../../docs/benchmarks.md', import.meta.url).pathname;
  const page = readFileSync(pagePath, 'utf8');
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  const block = `${begin}\n${options.docs ?? markdown}\n${end}`;
  // A benchmark's first run puts its block after the page's title and two-line summary.
  const afterSummary = page.indexOf('\n\n', page.indexOf('\n\n') + 2) + 2;
  const next = page.includes(begin)
    ? page.replace(new RegExp(`${begin}[\\s\\S]*?${end}`), () => block)
    : `${page.slice(0, afterSummary)}${block}\n\n${page.slice(afterSummary)}`;
  writeFileSync(pagePath, next);
  log(`figures in bench/results/${name}.json and docs/benchmarks.md`);
}
