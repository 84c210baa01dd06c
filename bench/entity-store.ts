// Entity store benchmark: POST /portfolios/, PATCH /portfolios/{id} and GET /portfolios/{id} at 32
// concurrent clients (autocannon), against a minimal plain-pg script writing and reading the same
// rows, and the service's GET /livez against a bare Express 5 app and a bare Node http server,
// alternating in one run; medians of the rounds, with the database round trips of each operation
// (the service's http_request_database_round_trips, the script's own count). `npm run bench:entities`
// (BENCH_SECONDS, BENCH_ROUNDS and BENCH_CONNECTIONS change the defaults of 8, 3 and 32).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import pg from 'pg';
import { newId } from '@platform/shared';
import { freePort } from '@platform/dev-stack/ports';
import { cpuPerOperation, cpuSeconds } from './lib/cpu.ts';
import { closedLoop, median, record, round, roundTripsByOperation, startBenchPlatform, type Figures } from './lib/harness.ts';
import { measureErasure } from './lib/erasure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

// Requests are not counted against a rate limit here: the plain-pg script writes no counter row
// either, and bench:rate-limits measures what counting costs (docs/adr/0023-rate-limits.md).
const platform = await startBenchPlatform({ DATABASE_POOL_MAX: String(CONNECTIONS), LOG_LEVEL: 'info', RATE_LIMIT_ACCESS_KEY: '0' });
const pool = new pg.Pool({ connectionString: platform.databaseUrl, max: CONNECTIONS });

/** A bare server of bench/baselines/bare-http.ts in its own process, as the service is. */
async function startBare(kind: 'express' | 'node'): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/baselines/bare-http.ts', kind, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare ${kind} server exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', () => resolve());
  });
  return { url: `http://127.0.0.1:${port}`, process: child };
}
const bareExpress = await startBare('express');
const bareNode = await startBare('node');

const headers = { authorization: `Bearer ${platform.token}`, 'content-type': 'application/json' };
const owner = ((await (await fetch(`${platform.managementUrl}/users/`, { method: 'POST', headers, body: '{}' })).json()) as { id: string }).id;
const portfolioBody = JSON.stringify({
  name: 'Pension',
  owned_by_user_id: owner,
  base_currency: 'EUR',
  money_type: 'REAL_MONEY',
  config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
  portfolio: { $EUR: 1000, IE00B4L5Y983: 12 },
});
// The document the service stores for that body, for the plain-pg script to write.
const storedDoc = async () => (await platform.db('entities').where({ type: 'portfolios' }).first('doc')).doc;

/** The HTTP stack alone (routing, logging, no database): the ceiling any operation is under. */
async function livez(base: string): Promise<Figures> {
  const result = await autocannon({ url: `${base}/livez`, connections: CONNECTIONS, duration: SECONDS });
  return { rps: round(result.requests.average), p50_ms: result.latency.p50, p99_ms: result.latency.p99, errors: result.errors + result.non2xx };
}

async function service(method: 'POST' | 'PATCH' | 'GET', ids: string[]): Promise<Figures> {
  let i = 0;
  const result = await autocannon({
    url: platform.managementUrl,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers,
    requests: [
      {
        method,
        setupRequest: (req) => {
          const id = ids[i++ % Math.max(ids.length, 1)];
          if (method === 'POST') return { ...req, path: '/portfolios/', body: portfolioBody };
          if (method === 'PATCH') return { ...req, path: `/portfolios/${id}`, body: JSON.stringify({ name: `name ${i}` }) };
          return { ...req, path: `/portfolios/${id}` };
        },
      },
    ],
  });
  return { rps: round(result.requests.average), p50_ms: result.latency.p50, p99_ms: result.latency.p99, errors: result.errors + result.non2xx };
}

/** Round trips of the plain-pg script per operation, counted as it makes them. */
const plainTrips = { insert: { sum: 0, count: 0 }, update: { sum: 0, count: 0 }, select: { sum: 0, count: 0 } };

async function plainPg(operation: 'insert' | 'update' | 'select', ids: string[], doc: Record<string, unknown>): Promise<Figures> {
  const tenant = platform.tenantId;
  const trips = plainTrips[operation];
  return closedLoop(CONNECTIONS, SECONDS, async (worker, n) => {
    trips.count++;
    if (operation === 'select') {
      trips.sum++;
      await pool.query(
        'select id, version, doc, deleted, readable_by, modifiable_by, created_at, version_at, version_author_id from entities where tenant_id = $1 and id = $2',
        [tenant, ids[(worker * 7919 + n) % ids.length]],
      );
      return;
    }
    const client = await pool.connect();
    const query = client.query.bind(client) as (text: string, values?: unknown[]) => Promise<pg.QueryResult>;
    client.query = ((text: string, values?: unknown[]) => {
      trips.sum++;
      return query(text, values);
    }) as typeof client.query;
    try {
      await client.query('begin');
      const now = new Date();
      if (operation === 'insert') {
        const id = newId('P');
        await client.query(
          `insert into entities (tenant_id, id, type, version, doc, readable_by, modifiable_by, created_at, version_at, version_author_id)
           values ($1, $2, 'portfolios', 1, $3, $4, $4, $5, $5, 'bench')`,
          [tenant, id, doc, [owner], now],
        );
        await client.query(
          `insert into entity_versions (tenant_id, id, version, doc, deleted, version_at, version_author_id) values ($1, $2, 1, $3, false, $4, 'bench')`,
          [tenant, id, doc, now],
        );
      } else {
        const id = ids[(worker * 7919 + n) % ids.length];
        const { rows } = await client.query('select version, doc from entities where tenant_id = $1 and id = $2 for update', [tenant, id]);
        const next = { ...rows[0].doc, name: `name ${n}` };
        const version = rows[0].version + 1;
        await client.query('update entities set version = $3, doc = $4, version_at = $5 where tenant_id = $1 and id = $2', [tenant, id, version, next, now]);
        await client.query(
          `insert into entity_versions (tenant_id, id, version, doc, deleted, version_at, version_author_id) values ($1, $2, $3, $4, false, $5, 'bench')`,
          [tenant, id, version, next, now],
        );
      }
      await client.query('commit');
    } catch (error) {
      await client.query('rollback');
      throw error;
    } finally {
      client.query = query as typeof client.query;
      client.release();
    }
  });
}

type Measured = Figures & { cpu_ms: Record<string, number> };
/** A measurement with the CPU time per operation of each process group named. */
const withCpu = async (groups: Record<string, () => number>, run: () => Promise<Figures>): Promise<Measured> => {
  const { operations: _operations, ...figures } = await cpuPerOperation(groups, async () => {
    const f = await run();
    return { ...f, operations: f.rps * SECONDS };
  });
  return figures;
};
const serviceCpu = { service: platform.cpu.service, postgres: platform.cpu.postgres, client: platform.cpu.bench };
const plainCpu = { client: platform.cpu.bench, postgres: platform.cpu.postgres };
const bareCpu = (pid: number) => ({ service: () => cpuSeconds([pid]), client: platform.cpu.bench });

type Row = { operation: string; operationId: string; plainOp: keyof typeof plainTrips; service: Measured[]; plain: Measured[] };
const rows: Row[] = [
  { operation: 'POST /portfolios/', operationId: 'createPortfolio', plainOp: 'insert', service: [], plain: [] },
  { operation: 'PATCH /portfolios/{id}', operationId: 'updatePortfolio', plainOp: 'update', service: [], plain: [] },
  { operation: 'GET /portfolios/{id}', operationId: 'getPortfolio', plainOp: 'select', service: [], plain: [] },
];

// Warm up both sides and have documents to patch and read.
await service('POST', []);
const doc = await storedDoc();
await plainPg('insert', [], doc);
const servicePortfolios = (await platform
  .db('entities')
  .where({ type: 'portfolios' })
  .whereNot({ version_author_id: 'bench' })
  .limit(2000)
  .pluck('id')) as string[];
const plainPortfolios = (await platform.db('entities').where({ type: 'portfolios', version_author_id: 'bench' }).limit(2000).pluck('id')) as string[];

/**
 * Between two measurements: the relay has sent every event of the service's writes, and the tables
 * written are vacuumed and analyzed, so that neither the relay nor autovacuum of one phase runs
 * (and is counted) in the next.
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { n } = (await platform.db('outbox').whereNull('published_at').count({ n: '*' }).first()) as { n: string };
    if (Number(n) === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await platform.db.raw('vacuum (analyze) entities, entity_versions, outbox');
}

const floor: Measured[] = [];
const express5: Measured[] = [];
const nodeHttp: Measured[] = [];
for (let round_ = 1; round_ <= ROUNDS; round_++) {
  console.log(`[bench] round ${round_} of ${ROUNDS}`);
  await settle();
  floor.push(await withCpu(serviceCpu, () => livez(platform.managementUrl)));
  express5.push(await withCpu(bareCpu(bareExpress.process.pid!), () => livez(bareExpress.url)));
  nodeHttp.push(await withCpu(bareCpu(bareNode.process.pid!), () => livez(bareNode.url)));
  rows[0]!.service.push(await withCpu(serviceCpu, () => service('POST', [])));
  await settle();
  rows[0]!.plain.push(await withCpu(plainCpu, () => plainPg('insert', [], doc)));
  await settle();
  rows[1]!.service.push(await withCpu(serviceCpu, () => service('PATCH', servicePortfolios)));
  await settle();
  rows[1]!.plain.push(await withCpu(plainCpu, () => plainPg('update', plainPortfolios, doc)));
  await settle();
  rows[2]!.service.push(await withCpu(serviceCpu, () => service('GET', servicePortfolios)));
  rows[2]!.plain.push(await withCpu(plainCpu, () => plainPg('select', plainPortfolios, doc)));
}

const serviceTrips = await roundTripsByOperation(platform.metricsUrl);
const perRequest = (t: { sum: number; count: number } | undefined) => (t && t.count > 0 ? round(t.sum / t.count, 1) : 0);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
/** Median CPU milliseconds per operation of each process group over the rounds. */
const cpuOf = (list: Measured[]) => Object.fromEntries(Object.keys(list[0]!.cpu_ms).map((k) => [k, median(list.map((f) => f.cpu_ms[k]!))]));
const cpuText = (cpu: Record<string, number>, ...names: string[]) => names.map((n) => cpu[n] ?? 0).join(' + ');
const summary = rows.map((r) => {
  const pick = (list: Figures[], key: keyof Figures) => median(list.map((f) => f[key] as number));
  const s = {
    rps: pick(r.service, 'rps'),
    p50_ms: pick(r.service, 'p50_ms'),
    p99_ms: pick(r.service, 'p99_ms'),
    errors: r.service.reduce((a, f) => a + f.errors, 0),
  };
  const p = { rps: pick(r.plain, 'rps'), p50_ms: pick(r.plain, 'p50_ms'), p99_ms: pick(r.plain, 'p99_ms'), errors: r.plain.reduce((a, f) => a + f.errors, 0) };
  return {
    operation: r.operation,
    service: { ...s, round_trips: perRequest(serviceTrips.get(r.operationId)), cpu_ms: cpuOf(r.service) },
    plain_pg: { ...p, round_trips: perRequest(plainTrips[r.plainOp]), cpu_ms: cpuOf(r.plain) },
    ratio: round(s.rps / p.rps),
    rounds: { service: r.service, plain_pg: r.plain },
  };
});
const http = [
  { server: 'service `GET /livez` (contract routing, auth skipped, access log, span, metrics)', rounds: floor },
  { server: 'bare Express 5 app, `GET /livez`', rounds: express5 },
  { server: 'bare Node http server, `GET /livez`', rounds: nodeHttp },
].map((h) => ({
  ...h,
  rps: median(h.rounds.map((f) => f.rps)),
  p50_ms: median(h.rounds.map((f) => f.p50_ms)),
  p99_ms: median(h.rounds.map((f) => f.p99_ms)),
  cpu_ms: cpuOf(h.rounds),
}));
const livezRatio = round(http[0]!.rps / http[1]!.rps);
// An erasure overwrites every version of one user: one request at a time, beside a PATCH of the same users.
const erasure = await measureErasure(platform.managementUrl, headers);

const markdown = [
  `### Entity store (\`npm run bench:entities\`)`,
  '',
  `${CONNECTIONS} concurrent clients, ${ROUNDS} alternating rounds of ${SECONDS} s each, medians; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine.`,
  'Service: HTTP through autocannon (JWT check, contract validation, row-level security, version row, outbox event, JSON access log line, span, metrics); requests not counted against a rate limit (bench:rate-limits measures that).',
  'Plain pg: a script writing and reading the same rows with `pg` (no HTTP, no checks, no event). Round trips: per request, the service’s `http_request_database_round_trips` (a batch of statements sent together is one) and the script’s own count.',
  '',
  '| operation | service req/s | p50 ms | p99 ms | round trips | CPU ms: service + Postgres + client | plain pg ops/s | p50 ms | p99 ms | round trips | CPU ms: Postgres + client | service / plain pg (target ≥ 0.5×) |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ...summary.map(
    (r) =>
      `| ${r.operation} | ${r.service.rps} | ${r.service.p50_ms} | ${r.service.p99_ms} | ${r.service.round_trips} | ${cpuText(r.service.cpu_ms, 'service', 'postgres', 'client')} | ${r.plain_pg.rps} | ${r.plain_pg.p50_ms} | ${r.plain_pg.p99_ms} | ${r.plain_pg.round_trips} | ${cpuText(r.plain_pg.cpu_ms, 'postgres', 'client')} | ${r.ratio}× ${r.ratio >= 0.5 ? 'met' : 'not met'} |`,
  ),
  '',
  'CPU ms: CPU time per request (per operation) of the service process, of Postgres (server and backends) and of the process that sends the load (autocannon, or the plain-pg script itself), medians over the rounds.',
  'Before each measurement after a write, the relay has sent every event and the tables written are vacuumed and analyzed (the same for both sides).',
  '',
  'The HTTP stack alone, no database, in the same run:',
  '',
  '| server | req/s | p50 ms | p99 ms | CPU ms: server + client | service / this |',
  '|---|---|---|---|---|---|',
  ...http.map((h) => `| ${h.server} | ${h.rps} | ${h.p50_ms} | ${h.p99_ms} | ${cpuText(h.cpu_ms, 'service', 'client')} | ${round(http[0]!.rps / h.rps)}× |`),
  '',
  `Target service \`/livez\` ≥ 0.8× the bare Express 5 app: ${livezRatio >= 0.8 ? 'met' : 'not met'} (${livezRatio}×).`,
  '',
  'Where the time goes (CPU per request, all processes, against the same work by the other side):',
  ...summary.map((r) => {
    const service = sum(Object.values(r.service.cpu_ms));
    const plain = sum(Object.values(r.plain_pg.cpu_ms));
    return `- ${r.operation}: ${round(service, 3)} ms (service ${r.service.cpu_ms.service}, Postgres ${r.service.cpu_ms.postgres}) against ${round(plain, 3)} ms for plain pg, ${round(service / plain, 1)}× the CPU.`;
  }),
  `- \`GET /livez\`: the service ${http[0]!.cpu_ms.service} ms against ${http[1]!.cpu_ms.service} ms for the bare Express 5 app.`,
  `Errors or non-2xx answers: service ${summary.reduce((a, r) => a + r.service.errors, 0) + floor.reduce((a, f) => a + f.errors, 0)}, plain pg ${summary.reduce((a, r) => a + r.plain_pg.errors, 0)}.`,
  '',
  `Erasure (\`POST /users/{id}/erasure/\`, docs/adr/0059-personal-data-erasure.md): ${erasure.users} users of ${erasure.versions_per_user} versions each, erased one after another: median ${erasure.erase_p50_ms} ms (p90 ${erasure.erase_p90_ms} ms), ${erasure.erasures_per_s} erasures/s, against ${erasure.patch_p50_ms} ms for a PATCH of the same users.`,
  `Target service ≥ 0.5× plain pg: ${
    summary.every((r) => r.ratio >= 0.5)
      ? 'met'
      : `not met (${summary
          .filter((r) => r.ratio < 0.5)
          .map((r) => r.operation)
          .join(', ')})`
  }.`,
].join('\n');

record('entity-store', { connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, http, livez_vs_express: livezRatio, results: summary, erasure }, markdown);
console.log(markdown);
for (const bare of [bareExpress, bareNode]) bare.process.kill('SIGTERM');
await pool.end();
await platform.stop();
