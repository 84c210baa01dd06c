// Query language benchmark: 1,000,000 portfolios of 100,000 users, 1,000 of them with a pending
// withdrawal (a non-zero divest_amount; the other robo-advised ones hold 0). Latency: four queries of
// the interface through GET /portfolios/ against the same queries written by hand in SQL (plain pg),
// alternating in one run; p50/p99, the ratio, and the indexes Postgres uses for the statement the
// service sends. Throughput of the two lookups at BENCH_CLIENTS concurrent clients: plain pg, the
// collection handler without HTTP (parse, compile, statements under row-level security, JSON), the
// service over HTTP, and GET /livez (the HTTP stack alone), alternating in rounds.
// `npm run bench:queries` (BENCH_PORTFOLIOS, BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONCURRENCY, BENCH_CLIENTS).
import autocannon from 'autocannon';
import pg from 'pg';
import { compileQuery } from '@platform/management-service/query/compile';
import { fieldType } from '@platform/management-service/query/fields';
import { parseQuery } from '@platform/management-service/query/parser';
import { entityKinds } from '@platform/management-service/domain/entities/catalog';
import type { Principal } from '@platform/management-service/domain/principal';
import { listCollection } from '@platform/management-service/http/handlers/collections';
import { countOf, pageOf, type CollectionFilter } from '@platform/management-service/store/collections';
import { CURRENT_COLUMNS } from '@platform/management-service/store/entities';
import { createDb } from '@platform/management-service/store/db';
import { inTenant } from '@platform/management-service/store/tenant-scope';
import { loadContract, type HandlerContext } from '@platform/shared';
import { pendingOf, resolveUsers, seedPortfolios } from './lib/portfolio-seed.ts';
import { queryCases, type Case } from './lib/query-cases.ts';
import { closedLoop, median, record, round, roundTripsByOperation, startBenchPlatform, type Figures } from './lib/harness.ts';

const PORTFOLIOS = Number(process.env.BENCH_PORTFOLIOS ?? 1_000_000);
const USERS = Math.max(10, Math.round(PORTFOLIOS / 10));
/** Portfolios with a non-zero divest_amount (the seed's pending withdrawals). */
const PENDING = pendingOf(PORTFOLIOS);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);

// Nothing is counted against rate limits (RATE_LIMIT_ACCESS_KEY=0): at these rates the default budget would
// refuse most requests, and what counting costs is measured by `npm run bench:rate-limits`. The token lives an hour:
// seeding alone can outlast the default five minutes.
const platform = await startBenchPlatform({
  DATABASE_POOL_MAX: String(CLIENTS),
  LOG_LEVEL: 'warn',
  RATE_LIMIT_ACCESS_KEY: '0',
  ACCESS_TOKEN_TTL_SECONDS: '3600',
});
const pool = new pg.Pool({ connectionString: platform.databaseUrl, max: CLIENTS });
/** The service's own kind of connections (a read under the tenant scope batched into one round trip), for the handler without HTTP. */
const serviceDb = createDb(platform.databaseUrl, CLIENTS);
const tenant = platform.tenantId;

const definition = await loadContract('management');
const portfolioSchema = definition.components!.schemas!.Portfolio as Parameters<typeof fieldType>[0];

const cases = queryCases(tenant, PORTFOLIOS, USERS);
const resolved = (c: Case, n: number) => resolveUsers(c.query(n));
const requestPath = (c: Case, n: number) => `/portfolios/?query=${encodeURIComponent(resolved(c, n))}${c.embed ? `&embed=${c.embed}` : ''}`;
/** Distinct requests per worker: worker w's i-th request is for n = w * 100,003 + i * 7,919. */
const nOf = (worker: number, i: number) => worker * 100_003 + i * 7919;

async function viaHttp(c: Case): Promise<Figures> {
  const headers = { authorization: `Bearer ${platform.token}` };
  return closedLoop(CONCURRENCY, SECONDS, async (worker, i) => {
    const res = await fetch(`${platform.managementUrl}${requestPath(c, nOf(worker, i))}`, { headers });
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    await res.arrayBuffer();
  });
}

async function viaSql(c: Case, concurrency: number): Promise<Figures> {
  return closedLoop(concurrency, SECONDS, async (worker, i) => {
    for (const { text, values } of c.sql(nOf(worker, i))) {
      await pool.query(
        text,
        values.map((v) => (typeof v === 'string' ? resolveUsers(v) : v)),
      );
    }
  });
}

const fromAutocannon = (result: autocannon.Result): Figures => ({
  rps: round(result.requests.average),
  p50_ms: result.latency.p50,
  p99_ms: result.latency.p99,
  errors: result.errors + result.non2xx,
});

/** The service over HTTP at CLIENTS connections (autocannon), each request for another portfolio or owner. */
async function throughputHttp(c: Case): Promise<Figures> {
  let n = 0;
  const result = await autocannon({
    url: platform.managementUrl,
    connections: CLIENTS,
    duration: SECONDS,
    headers: { authorization: `Bearer ${platform.token}` },
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: requestPath(c, (n += 7919)) }) }],
  });
  return fromAutocannon(result);
}

/** The HTTP stack alone: routing, logging, no database. */
async function livez(): Promise<Figures> {
  return fromAutocannon(await autocannon({ url: `${platform.managementUrl}/livez`, connections: CLIENTS, duration: SECONDS }));
}

const principal: Principal = { tenantId: tenant, kind: 'machine', subject: 'bench' };
const portfolios = entityKinds.find((k) => k.type === 'portfolios')!;
const typeOf = (path: string[]) => fieldType(portfolioSchema, path);
/** The collection handler of the service called in this process: what a request costs without HTTP. */
function handle(c: Case, n: number) {
  const ctx = {
    query: { query: resolved(c, n), ...(c.embed ? { embed: c.embed } : {}) },
    params: {},
    principal,
    req: { path: '/portfolios/' },
  } as unknown as HandlerContext<Principal>;
  return listCollection(serviceDb, portfolios, typeOf, ctx);
}

async function throughputHandler(c: Case): Promise<Figures> {
  return closedLoop(CLIENTS, SECONDS, async (worker, i) => {
    JSON.stringify((await handle(c, nOf(worker, i))).body);
  });
}

/** The statements one request sends to Postgres (knex's query events, begin and commit included). */
async function statementsPerRequest(c: Case): Promise<string[]> {
  const seen: string[] = [];
  const listen = (q: { sql: string }) => seen.push(q.sql.replace(/\s+/g, ' ').slice(0, 60));
  serviceDb.on('query', listen);
  await handle(c, 42);
  serviceDb.off('query', listen);
  return seen;
}

const filterOf = (c: Case, n: number): { filter: CollectionFilter; orderBy: { sql: string; bindings: unknown[] } } => {
  const { where, orderBy } = compileQuery(parseQuery(resolved(c, n)), typeOf);
  return { filter: { tenantId: tenant, type: 'portfolios', includeDeleted: false, where }, orderBy };
};
/** Statement builders need a knex instance only to write SQL; nothing runs through it. */
const writer = platform.db as unknown as Parameters<typeof pageOf>[0];

/**
 * The statements the handler sends for request n, sent by `pg` itself: begin, the tenant scope (as
 * `inTenant` writes it), the page (one row more than asked), the count when the page is full, the
 * embedded owners, commit. The database's share of a request, without knex, parsing or JSON.
 */
async function serviceStatementsViaPg(c: Case): Promise<Figures> {
  return closedLoop(CLIENTS, SECONDS, async (worker, i) => {
    const { filter, orderBy } = filterOf(c, nOf(worker, i));
    const page = pageOf(writer, filter, orderBy, { limit: 21, offset: 0 }).toSQL().toNative();
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(
        `select set_config('app.tenant_id', $1, true), set_config('role', 'platform_tenant', true), set_config('lock_timeout', $2, true),
                (select broker_integration from tenants where id = $3) as broker_integration`,
        [tenant, '0ms', tenant],
      );
      const { rows } = await client.query(page.sql, page.bindings as unknown[]);
      if (rows.length > 20) {
        const count = countOf(writer, filter).toSQL().toNative();
        await client.query(count.sql, count.bindings as unknown[]);
      }
      if (c.embed) {
        const ids = [...new Set(rows.map((r: { doc: Record<string, unknown> }) => r.doc[c.embed!]).filter((id): id is string => typeof id === 'string'))];
        await client.query(`select ${CURRENT_COLUMNS.join(', ')} from entities where tenant_id = $1 and deleted = false and id = any($2)`, [tenant, ids]);
      }
      await client.query('commit');
    } finally {
      client.release();
    }
  });
}

/** The indexes Postgres uses for the statements the service sends (the page; the count when it sends one), under row-level security. */
async function planIndexes(c: Case, statements: string[]): Promise<string> {
  const { filter, orderBy } = filterOf(c, 42);
  type Node = { 'Node Type': string; 'Index Name'?: string; Plans?: Node[] };
  const nodes = (node: Node): Node[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
  const sent = [pageOf(writer, filter, orderBy, { limit: 21, offset: 0 })];
  if (statements.some((s) => s.startsWith('select count(*)'))) sent.push(countOf(writer, filter));
  const plan = await inTenant(platform.db, tenant, async (trx) => {
    const found: Node[] = [];
    for (const builder of sent) {
      const statement = builder.toSQL();
      const { rows } = await trx.raw(`explain (format json) ${statement.sql}`, statement.bindings);
      found.push(...nodes((rows[0]['QUERY PLAN'] as { Plan: Node }[])[0]!.Plan));
    }
    return found;
  });
  const used = [...new Set(plan.flatMap((n) => (n['Index Name'] ? [n['Index Name']] : n['Node Type'].includes('Seq Scan') ? ['none (sequential scan)'] : [])))];
  return used.join(', ');
}

const seedSeconds = await seedPortfolios(pool, { tenant, portfolios: PORTFOLIOS, users: USERS, pending: PENDING });
console.log(`[bench] seeded ${PORTFOLIOS.toLocaleString('en')} portfolios and ${USERS.toLocaleString('en')} users in ${seedSeconds} s`);
if (process.env.BENCH_EXPLAIN) {
  // Plans of the hand-written statements, to see where time goes; then stop.
  for (const c of cases) {
    for (const { text, values } of c.sql(42)) {
      const { rows } = await pool.query(
        `explain analyze ${text}`,
        values.map((v) => (typeof v === 'string' ? resolveUsers(v) : v)),
      );
      console.log(`--- ${c.name}\n${rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')}`);
    }
  }
  await pool.end();
  await serviceDb.destroy();
  await platform.stop();
  process.exit(0);
}

const lookups = cases.filter((c) => c.throughput);
const results: Record<string, { http: Figures[]; sql: Figures[]; index: string; statements: string[] }> = {};
for (const c of cases) {
  const statements = await statementsPerRequest(c);
  results[c.name] = { http: [], sql: [], index: await planIndexes(c, statements), statements };
}
const throughput: Record<string, { plain: Figures[]; statements: Figures[]; handler: Figures[]; http: Figures[] }> = {};
for (const c of lookups) throughput[c.name] = { plain: [], statements: [], handler: [], http: [] };
const floor: Figures[] = [];
/** The service's database round trips per GET /portfolios/ so far (its http_request_database_round_trips). */
const listTrips = async () => (await roundTripsByOperation(platform.metricsUrl)).get('listPortfolios') ?? { sum: 0, count: 0 };
const tripsPerRequest: Record<string, number> = {};
for (let r = 1; r <= ROUNDS; r++) {
  console.log(`[bench] round ${r} of ${ROUNDS}`);
  for (const c of cases) {
    const before = await listTrips();
    results[c.name]!.http.push(await viaHttp(c));
    const after = await listTrips();
    if (r === 1) tripsPerRequest[c.name] = round((after.sum - before.sum) / Math.max(1, after.count - before.count), 2);
    results[c.name]!.sql.push(await viaSql(c, CONCURRENCY));
  }
  floor.push(await livez());
  for (const c of lookups) {
    throughput[c.name]!.plain.push(await viaSql(c, CLIENTS));
    throughput[c.name]!.statements.push(await serviceStatementsViaPg(c));
    throughput[c.name]!.handler.push(await throughputHandler(c));
    throughput[c.name]!.http.push(await throughputHttp(c));
  }
}

const med = (list: Figures[], key: keyof Figures) => median(list.map((f) => f[key]));
const figures = (list: Figures[]) => ({ rps: med(list, 'rps'), p50_ms: med(list, 'p50_ms'), p99_ms: med(list, 'p99_ms') });
const errorsOf = (list: Figures[]) => list.reduce((a, f) => a + f.errors, 0);
const summary = cases.map((c) => {
  const r = results[c.name]!;
  const http = figures(r.http);
  const sql = figures(r.sql);
  return {
    query: c.name,
    http,
    sql,
    ratio_p50: round(http.p50_ms / sql.p50_ms),
    index: r.index,
    expects_index: c.indexed,
    statements_per_request: r.statements.length,
    round_trips_per_request: tripsPerRequest[c.name] ?? 0,
    statements: r.statements,
    errors: errorsOf(r.http) + errorsOf(r.sql),
  };
});
const livezRps = med(floor, 'rps');
const rates = lookups.map((c) => {
  const t = throughput[c.name]!;
  const plain = figures(t.plain);
  const statements = figures(t.statements);
  const handler = figures(t.handler);
  const http = figures(t.http);
  return {
    query: c.name,
    plain_pg: plain,
    service_statements_via_pg: statements,
    handler_without_http: handler,
    service_http: http,
    ratio: round(http.rps / plain.rps),
    handler_ratio: round(handler.rps / plain.rps),
    errors: errorsOf(t.plain) + errorsOf(t.statements) + errorsOf(t.handler) + errorsOf(t.http),
    rounds: t,
  };
});
const pending = summary.find((s) => s.query === 'pending withdrawals')!;
const list = (names: string[]) => names.join(', ');
/**
 * What keeps a lookup below half of plain pg's rate, from the figures of this run: the stages of its
 * path that stay below half, and the time per request one saturated service process has at half the
 * rate against what GET /livez alone and the handler without HTTP take.
 */
function limitOf(r: (typeof rates)[number]): string {
  const half = 0.5 * r.plain_pg.rps;
  if (r.service_http.rps >= half) return 'target met';
  const below: string[] = [];
  if (r.service_statements_via_pg.rps < half) below.push('its statements sent by `pg` one by one');
  if (r.handler_without_http.rps < half) below.push("the handler without HTTP on the service's own connections");
  if (livezRps < half) below.push('`GET /livez`, which does no database work');
  const stages = below.length ? `below half already in ${list(below)}; ` : '';
  return (
    `${stages}at half of plain pg's rate (${round(half)} req/s) one service process, which runs a request's JavaScript on one thread, ` +
    `would have ${round(1000 / half, 3)} ms per request, while \`GET /livez\` alone takes ${round(1000 / livezRps, 3)} ms there and the handler without HTTP ${round(1000 / r.handler_without_http.rps, 3)} ms`
  );
}

const markdown = [
  '### Query language (`npm run bench:queries`)',
  '',
  `${PORTFOLIOS.toLocaleString('en')} portfolios of ${USERS.toLocaleString('en')} users, ${PENDING.toLocaleString('en')} of them with a pending withdrawal (divest_amount not 0; the other robo-advised ones hold 0), seeded in ${seedSeconds} s; ${ROUNDS} alternating rounds of ${SECONDS} s, medians; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine, shared with other work.`,
  '',
  `Latency, ${CONCURRENCY} concurrent clients. Service: \`GET /portfolios/?query=…\` over HTTP (parse, compile, the page and, when it is full, the count under row-level security, JSON answer). Hand-written SQL: the same count, page (and owner) written directly for \`pg\`, no HTTP.`,
  '',
  '| query | service p50 ms | p99 ms | SQL p50 ms | p99 ms | p50 ratio | indexes of the statement the service sends | statements per request | round trips per request |',
  '|---|---|---|---|---|---|---|---|---|',
  ...summary.map(
    (s) =>
      `| ${s.query} | ${s.http.p50_ms} | ${s.http.p99_ms} | ${s.sql.p50_ms} | ${s.sql.p99_ms} | ${s.ratio_p50}× | ${s.index} | ${s.statements_per_request} | ${s.round_trips_per_request} |`,
  ),
  '',
  `Target p50 ≤ 50 ms for ${PENDING.toLocaleString('en')} pending withdrawals: ${pending.http.p50_ms <= 50 ? 'met' : 'not met'} (${pending.http.p50_ms} ms, index ${pending.index}).`,
  "Statements per request: begin, tenant scope, the page (one row more than asked), the count only when the page is full, the embedded owners, commit. Round trips per request: the service's `http_request_database_round_trips` over the first round (the scope travels with the first statement, and a read sends no begin or commit of its own).",
  '',
  `Throughput, ${CLIENTS} concurrent clients (autocannon for HTTP; a closed loop of ${CLIENTS} workers for the others). Service's statements via pg: the statements the service sends for each request (begin, tenant scope, page, count if full, owners, commit), sent by \`pg\` without knex, one round trip each. Handler without HTTP: the service's collection handler called in the benchmark's process on the service's own kind of connections (parse, compile, knex, the same statements in the service's round trips).`,
  '',
  "| lookup | plain pg req/s | service's statements via pg req/s | handler without HTTP req/s | service req/s | p50 ms | p99 ms | service / plain pg |",
  '|---|---|---|---|---|---|---|---|',
  ...rates.map(
    (r) =>
      `| ${r.query} | ${r.plain_pg.rps} | ${r.service_statements_via_pg.rps} | ${r.handler_without_http.rps} | ${r.service_http.rps} | ${r.service_http.p50_ms} | ${r.service_http.p99_ms} | ${r.ratio}× |`,
  ),
  '',
  `For scale: \`GET /livez\` (routing, logging, no database) answers ${livezRps} req/s at ${CLIENTS} connections here, ${list(rates.map((r) => `${round(livezRps / r.plain_pg.rps)}× plain pg's ${r.query}`))}.`,
  `Target service ≥ 0.5× plain pg throughput: ${
    rates.every((r) => r.ratio >= 0.5)
      ? 'met'
      : `not met (${list(rates.filter((r) => r.ratio < 0.5).map((r) => `${r.query} ${r.ratio}×`))}; see "Where the time of a lookup goes" below)`
  }.`,
  `Target ≤ 1.5× hand-written SQL latency (p50): ${
    summary.every((s) => s.ratio_p50 <= 1.5) ? 'met' : `not met (${list(summary.filter((s) => s.ratio_p50 > 1.5).map((s) => s.query))})`
  }. Errors or non-2xx answers: ${summary.reduce((a, s) => a + s.errors, 0) + rates.reduce((a, r) => a + r.errors, 0)}.`,
  '',
  '**Where the time of a lookup goes.** ' +
    rates
      .map((r) => {
        const share = (rps: number) => `${rps} req/s, ${round(rps / r.plain_pg.rps)}× plain pg`;
        const sent = summary.find((s) => s.query === r.query)!.statements_per_request;
        return (
          `${r.query}: plain pg answers ${r.plain_pg.rps} req/s with ${r.query.startsWith('external_id') ? 'one statement' : 'three statements (count, page, owner)'}. ` +
          `The service sends ${sent} statements under row-level security; sent by \`pg\` alone one by one they run at ${share(r.service_statements_via_pg.rps)}, ` +
          `the handler (parse, compile, knex) at ${share(r.handler_without_http.rps)}, the service over HTTP at ${share(r.service_http.rps)}.`
        );
      })
      .join(' ') +
    ` With no database work at all, \`GET /livez\` answers ${livezRps} req/s (${list(rates.map((r) => `${round(livezRps / r.plain_pg.rps)}× plain pg's ${r.query}`))}). ` +
    rates.map((r) => `${r.query}: ${limitOf(r)}.`).join(' '),
].join('\n');

record(
  'query-language',
  {
    portfolios: PORTFOLIOS,
    users: USERS,
    pending: PENDING,
    seed_seconds: seedSeconds,
    concurrency: CONCURRENCY,
    clients: CLIENTS,
    seconds: SECONDS,
    rounds: ROUNDS,
    livez_rps: floor.map((f) => f.rps),
    results: summary,
    throughput: rates,
  },
  markdown,
);
console.log(markdown);
await pool.end();
await serviceDb.destroy();
await platform.stop();
