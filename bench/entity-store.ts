// Entity store benchmark: POST /portfolios/, PATCH /portfolios/{id} and GET /portfolios/{id} at 32
// concurrent clients (autocannon), against the peer (bench/baselines/peer-express.ts: the same
// operations hand-written with Express 5, jose, Ajv and pg) and a minimal plain-pg script writing
// and reading the same rows (the limit), and the service's GET /livez against a bare Express 5 app
// and a bare Node http server, alternating in one run; medians of the rounds, with the CPU per
// request of each process and the database round trips of each operation (the service's
// http_request_database_round_trips, the script's own count). `npm run bench:entities`
// (BENCH_SECONDS, BENCH_ROUNDS and BENCH_CONNECTIONS change the defaults of 8, 3 and 32).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import pg from 'pg';
import { newId } from '@platform/shared';
import { freePort } from '@platform/dev-stack/ports';
import { cpuPerOperation, cpuSeconds } from './lib/cpu.ts';
import { closedLoop, record, round, roundTripsByOperation, startBenchPlatform, type Figures } from './lib/harness.ts';
import { measureErasure } from './lib/erasure.ts';
import { portfolioRequest, settle as settleDb } from './lib/entity-load.ts';
import { entityStoreReport, type Measured, type Row } from './lib/entity-report.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

// Requests are not counted against a rate limit here: the plain-pg script writes no counter row
// either, and bench:rate-limits measures what counting costs (docs/adr/0023-rate-limits.md).
// DATABASE_PREPARED_STATEMENTS=false measures the service without its named statements, OUTBOX_RELAY=false
// without the relay that publishes its outbox rows in the same process (docs/adr/0031-http-hot-path.md).
const platform = await startBenchPlatform({
  DATABASE_POOL_MAX: String(CONNECTIONS),
  LOG_LEVEL: 'info',
  RATE_LIMIT_ACCESS_KEY: '0',
  DATABASE_PREPARED_STATEMENTS: process.env.DATABASE_PREPARED_STATEMENTS ?? 'true',
  OUTBOX_RELAY: process.env.OUTBOX_RELAY ?? 'true',
  // The run outlasts the default 5 minutes of the token its requests carry.
  ACCESS_TOKEN_TTL_SECONDS: '3600',
});
const pool = new pg.Pool({ connectionString: platform.databaseUrl, max: CONNECTIONS });

/** A baseline server of bench/baselines/ in its own process, as the service is. */
async function startBaseline(file: string, args: string[]): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', `bench/baselines/${file}`, ...args.map((a) => (a === 'PORT' ? String(port) : a))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${file} ${args[0]} exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', () => resolve());
  });
  return { url: `http://127.0.0.1:${port}`, process: child };
}
const bareExpress = await startBaseline('bare-http.ts', ['express', 'PORT']);
const bareNode = await startBaseline('bare-http.ts', ['node', 'PORT']);
const peer = await startBaseline('peer-express.ts', ['PORT', platform.databaseUrl, platform.managementUrl]);

const { headers, owner, body: portfolioBody } = await portfolioRequest(platform);
// The document the service stores for that body, for the plain-pg script to write.
const storedDoc = async () => (await platform.db('entities').where({ type: 'portfolios' }).first('doc')).doc;

/** The HTTP stack alone (routing, logging, no database): the ceiling any operation is under. */
async function livez(base: string): Promise<Figures> {
  const result = await autocannon({ url: `${base}/livez`, connections: CONNECTIONS, duration: SECONDS });
  return { rps: round(result.requests.average), p50_ms: result.latency.p50, p99_ms: result.latency.p99, errors: result.errors + result.non2xx };
}

/** The three operations over HTTP, to the service or to the peer. */
async function http(url: string, method: 'POST' | 'PATCH' | 'GET', ids: string[]): Promise<Figures> {
  let i = 0;
  const result = await autocannon({
    url,
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

/** The peer's round trips per operation, as its code makes them: begin, the statements, commit. */
const PEER_TRIPS = { insert: 6, update: 6, select: 1 };

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
const peerCpu = { peer: () => cpuSeconds([peer.process.pid!]), postgres: platform.cpu.postgres, client: platform.cpu.bench };

const rows: (Row & { plainOp: keyof typeof plainTrips })[] = [
  { operation: 'POST /portfolios/', operationId: 'createPortfolio', plainOp: 'insert', service: [], peer: [], plain: [] },
  { operation: 'PATCH /portfolios/{id}', operationId: 'updatePortfolio', plainOp: 'update', service: [], peer: [], plain: [] },
  { operation: 'GET /portfolios/{id}', operationId: 'getPortfolio', plainOp: 'select', service: [], peer: [], plain: [] },
];

// Warm up all sides and have documents to patch and read.
await http(platform.managementUrl, 'POST', []);
await http(peer.url, 'POST', []);
const doc = await storedDoc();
await plainPg('insert', [], doc);
const peerPortfolios = (await platform.db('peer_audit').where({ action: 'create' }).limit(2000).pluck('entity_id')) as string[];
const servicePortfolios = (await platform
  .db('entities')
  .where({ type: 'portfolios' })
  .whereNot({ version_author_id: 'bench' })
  .whereNotIn('id', peerPortfolios)
  .limit(2000)
  .pluck('id')) as string[];
const plainPortfolios = (await platform.db('entities').where({ type: 'portfolios', version_author_id: 'bench' }).limit(2000).pluck('id')) as string[];

const settle = () => settleDb(platform.db, ['entities', 'entity_versions', 'outbox', 'peer_audit']);

const floor: Measured[] = [];
const express5: Measured[] = [];
const nodeHttp: Measured[] = [];
for (let round_ = 1; round_ <= ROUNDS; round_++) {
  console.log(`[bench] round ${round_} of ${ROUNDS}`);
  await settle();
  floor.push(await withCpu(serviceCpu, () => livez(platform.managementUrl)));
  express5.push(await withCpu(bareCpu(bareExpress.process.pid!), () => livez(bareExpress.url)));
  nodeHttp.push(await withCpu(bareCpu(bareNode.process.pid!), () => livez(bareNode.url)));
  const methods = ['POST', 'PATCH', 'GET'] as const;
  for (const [k, row] of rows.entries()) {
    const method = methods[k]!;
    await settle();
    row.service.push(await withCpu(serviceCpu, () => http(platform.managementUrl, method, servicePortfolios)));
    await settle();
    row.peer.push(await withCpu(peerCpu, () => http(peer.url, method, peerPortfolios)));
    await settle();
    row.plain.push(await withCpu(plainCpu, () => plainPg(row.plainOp, plainPortfolios, doc)));
  }
}

const serviceTrips = await roundTripsByOperation(platform.metricsUrl);
const perRequest = (t: { sum: number; count: number } | undefined) => (t && t.count > 0 ? round(t.sum / t.count, 1) : 0);
// An erasure overwrites every version of one user: one request at a time, beside a PATCH of the same users.
const erasure = await measureErasure(platform.managementUrl, headers);
const { json, markdown } = entityStoreReport({
  connections: CONNECTIONS,
  seconds: SECONDS,
  rounds: ROUNDS,
  rows: rows.map((r) => ({
    ...r,
    serviceTrips: perRequest(serviceTrips.get(r.operationId)),
    peerTrips: PEER_TRIPS[r.plainOp],
    plainTrips: perRequest(plainTrips[r.plainOp]),
  })),
  http: [
    { server: 'service `GET /livez` (contract routing, auth skipped, access log, span, metrics)', rounds: floor },
    { server: 'bare Express 5 app, `GET /livez`', rounds: express5 },
    { server: 'bare Node http server, `GET /livez`', rounds: nodeHttp },
  ],
  erasure,
});
record('entity-store', json, markdown);
console.log(markdown);
for (const baseline of [bareExpress, bareNode, peer]) baseline.process.kill('SIGTERM');
await pool.end();
await platform.stop();
