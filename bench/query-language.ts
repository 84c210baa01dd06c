// Query language benchmark: 1,000,000 portfolios, four queries of the interface through
// GET /portfolios/ against the same queries written by hand in SQL (plain pg), alternating in one
// run; p50/p99 latency, the ratio, and whether Postgres used an index.
// `npm run bench:queries` (BENCH_PORTFOLIOS, BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONCURRENCY).
import pg from 'pg';
import { compileQuery } from '../management-service/src/query/compile.ts';
import { fieldType } from '../management-service/src/query/fields.ts';
import { parseQuery } from '../management-service/src/query/parser.ts';
import { loadContract } from '@platform/shared';
import { closedLoop, median, record, round, startBenchPlatform, type Figures } from './lib/harness.ts';

const PORTFOLIOS = Number(process.env.BENCH_PORTFOLIOS ?? 1_000_000);
const USERS = Math.max(10, Math.round(PORTFOLIOS / 10));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const BATCH = 50_000;

const platform = await startBenchPlatform({ DATABASE_POOL_MAX: '16', LOG_LEVEL: 'warn' });
const pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 16 });
const tenant = platform.tenantId;

function progress(label: string, done: number, total: number, started: number): void {
  const width = 30;
  const filled = Math.round((done / total) * width);
  const rate = done / ((Date.now() - started) / 1000);
  process.stdout.write(
    `\r[bench] ${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done.toLocaleString('en')}/${total.toLocaleString('en')} ${Math.round(rate).toLocaleString('en')}/s`,
  );
  if (done === total) process.stdout.write('\n');
}

/** Ids in the stored format: type letter and 26 characters of the ULID alphabet. */
const idSql = (letter: string, n: string) => `'${letter}' || upper(substr(md5('${letter}' || ${n}::text), 1, 26))`;

async function seed(): Promise<void> {
  const started = Date.now();
  await pool.query(
    `insert into entities (tenant_id, id, type, version, doc, readable_by, modifiable_by, created_at, version_at)
     select $1, ${idSql('U', 'i')}, 'users', 1,
            jsonb_build_object('external_id', 'user-' || i, 'first_name', 'First' || i, 'last_name', 'Last' || (i % 1000), 'status', 'ACTIVE', 'feature_flags', '[]'::jsonb, 'products', '[]'::jsonb),
            array[${idSql('U', 'i')}], array[${idSql('U', 'i')}], now(), now()
       from generate_series(1, $2) i`,
    [tenant, USERS],
  );
  for (let from = 1; from <= PORTFOLIOS; from += BATCH) {
    const to = Math.min(PORTFOLIOS, from + BATCH - 1);
    await pool.query(
      `insert into entities (tenant_id, id, type, version, doc, readable_by, modifiable_by, created_at, version_at)
       select $1, ${idSql('P', 'i')}, 'portfolios', 1, doc, array[doc ->> 'owned_by_user_id'], array[doc ->> 'owned_by_user_id'],
              now() - (i || ' seconds')::interval, now()
         from (select i, jsonb_build_object(
                 'external_id', 'ext-' || i,
                 'name', 'Portfolio ' || (i % 9973),
                 'owned_by_user_id', ${idSql('U', `(1 + i % ${USERS})`)},
                 'base_currency', (array['EUR', 'USD', 'CHF', 'GBP'])[1 + i % 4],
                 'money_type', case when i % 10 = 0 then 'PAPER_MONEY' else 'REAL_MONEY' end,
                 'config', jsonb_build_object(
                   'manager', (array['USER_MANAGED', 'ROBO_ADVISOR_ADVISORY', 'ROBO_ADVISOR_DISCRETIONARY'])[1 + i % 3],
                   'manager_version', 1,
                   'manager_settings', jsonb_strip_nulls(jsonb_build_object(
                     'active', true,
                     'divest_amount', case when i % 100 = 7 then (i % 5000) + 0.5 when i % 10 = 3 then 0 end,
                     'suitability_profile_id', case when i % 20 = 1 then ${idSql('N', 'i')} end))),
                 'portfolio', jsonb_build_object('$EUR', i % 10000),
                 'status', 'ACTIVE', 'archived', false, 'funded_since', null) as doc
                 from generate_series($2::int, $3::int) i) s`,
      [tenant, from, to],
    );
    progress('seeding portfolios', to, PORTFOLIOS, started);
  }
  await pool.query('vacuum analyze entities');
}

const definition = await loadContract('management');
const portfolioSchema = definition.components!.schemas!.Portfolio as Parameters<typeof fieldType>[0];

/** Hand-written SQL: the statements a developer would send for the same answer, one after another. */
type Case = { name: string; query: (n: number) => string; embed?: string; sql: (n: number) => { text: string; values: unknown[] }[]; indexed: boolean };
const user = (n: number) => `U${(Math.abs(n) % USERS) + 1}`;
const cases: Case[] = [
  {
    name: 'external_id lookup',
    query: (n) => `external_id eq 'ext-${(n % PORTFOLIOS) + 1}'`,
    sql: (n) => [
      {
        text: `select doc from entities where tenant_id = $1 and type = 'portfolios' and external_id = $2 and not deleted`,
        values: [tenant, `ext-${(n % PORTFOLIOS) + 1}`],
      },
    ],
    indexed: true,
  },
  {
    name: 'pending withdrawals',
    query: () => 'config.manager_settings.divest_amount neq 0 and config.manager_settings.divest_amount neq null',
    sql: () => {
      const where = `tenant_id = $1 and type = 'portfolios' and not deleted
              and platform_numeric(doc, '{config,manager_settings,divest_amount}') is not null
              and platform_numeric(doc, '{config,manager_settings,divest_amount}') <> 0`;
      return [
        { text: `select count(*) from entities where ${where}`, values: [tenant] },
        { text: `select doc from entities where ${where} order by id limit 20`, values: [tenant] },
      ];
    },
    indexed: true,
  },
  {
    name: 'owner lookup + embed owner',
    query: (n) => `owned_by_user_id eq '{${user(n)}}'`,
    embed: 'owned_by_user_id',
    sql: (n) => {
      const where = `tenant_id = $1 and type = 'portfolios' and not deleted and platform_text(doc, '{owned_by_user_id}') = $2`;
      return [
        { text: `select count(*) from entities where ${where}`, values: [tenant, `{${user(n)}}`] },
        { text: `select doc from entities where ${where} order by id limit 20`, values: [tenant, `{${user(n)}}`] },
        { text: `select doc from entities where tenant_id = $1 and id = $2`, values: [tenant, `{${user(n)}}`] },
      ];
    },
    indexed: true,
  },
  {
    name: '3-clause and/or + orderby',
    query: () => "(base_currency eq 'EUR' or base_currency eq 'CHF') and config.manager eq 'ROBO_ADVISOR_DISCRETIONARY' orderby name desc",
    sql: () => {
      const where = `tenant_id = $1 and type = 'portfolios' and not deleted
              and (doc ->> 'base_currency' = 'EUR' or doc ->> 'base_currency' = 'CHF') and doc -> 'config' ->> 'manager' = 'ROBO_ADVISOR_DISCRETIONARY'`;
      return [
        { text: `select count(*) from entities where ${where}`, values: [tenant] },
        { text: `select doc from entities where ${where} order by doc ->> 'name' desc, id limit 20`, values: [tenant] },
      ];
    },
    indexed: false,
  },
];

/** User ids are md5-derived in the seed: resolve `{U17}` placeholders to the stored id. */
const userIds = new Map<string, string>();
async function resolveUsers(text: string): Promise<string> {
  const matches = [...text.matchAll(/\{(U\d+)\}/g)];
  for (const [, key] of matches) {
    if (!userIds.has(key!)) {
      const { rows } = await pool.query(`select ${idSql('U', '$1::int')} as id`, [Number(key!.slice(1))]);
      userIds.set(key!, rows[0].id);
    }
  }
  return text.replace(/\{(U\d+)\}/g, (_, key: string) => userIds.get(key)!);
}

async function viaHttp(c: Case): Promise<Figures> {
  const headers = { authorization: `Bearer ${platform.token}` };
  return closedLoop(CONCURRENCY, SECONDS, async (worker, i) => {
    const n = worker * 100_003 + i * 7919;
    const query = await resolveUsers(c.query(n));
    const res = await fetch(`${platform.managementUrl}/portfolios/?query=${encodeURIComponent(query)}${c.embed ? `&embed=${c.embed}` : ''}`, { headers });
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    await res.arrayBuffer();
  });
}

async function viaSql(c: Case): Promise<Figures> {
  return closedLoop(CONCURRENCY, SECONDS, async (worker, i) => {
    const n = worker * 100_003 + i * 7919;
    for (const { text, values } of c.sql(n)) {
      await pool.query(text, await Promise.all(values.map((v) => (typeof v === 'string' ? resolveUsers(v) : v))));
    }
  });
}

/** The index Postgres picks for the compiled query, as the service runs it. */
async function planIndex(c: Case): Promise<string> {
  const typeOf = (path: string[]) => fieldType(portfolioSchema, path);
  const { where } = compileQuery(parseQuery(await resolveUsers(c.query(42))), typeOf);
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query(`select set_config('app.tenant_id', $1, true), set_config('role', 'platform_tenant', true)`, [tenant]);
    let i = 1;
    const sql = where.sql.replace(/\?/g, () => `$${++i}`);
    const { rows } = await client.query(`explain select e.id from entities e where e.tenant_id = $1 and e.type = 'portfolios' and not e.deleted and ${sql}`, [
      tenant,
      ...where.bindings,
    ]);
    await client.query('rollback');
    const plan = rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    return (
      plan
        .match(/Index (?:Only )?Scan using (\w+)|Bitmap Index Scan on (\w+)/)
        ?.slice(1)
        .find(Boolean) ?? 'none (sequential scan)'
    );
  } finally {
    client.release();
  }
}

await seed();
if (process.env.BENCH_EXPLAIN) {
  // Plans of the hand-written statements, to see where time goes; then stop.
  for (const c of cases) {
    for (const { text, values } of c.sql(42)) {
      const { rows } = await pool.query(`explain analyze ${text}`, await Promise.all(values.map((v) => (typeof v === 'string' ? resolveUsers(v) : v))));
      console.log(`--- ${c.name}\n${rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')}`);
    }
  }
  await pool.end();
  await platform.stop();
  process.exit(0);
}
const results: Record<string, { http: Figures[]; sql: Figures[]; index: string }> = {};
for (const c of cases) results[c.name] = { http: [], sql: [], index: await planIndex(c) };
for (let r = 1; r <= ROUNDS; r++) {
  console.log(`[bench] round ${r} of ${ROUNDS}`);
  for (const c of cases) {
    results[c.name]!.http.push(await viaHttp(c));
    results[c.name]!.sql.push(await viaSql(c));
  }
}

const summary = cases.map((c) => {
  const r = results[c.name]!;
  const med = (list: Figures[], key: keyof Figures) => median(list.map((f) => f[key]));
  const http = { p50_ms: med(r.http, 'p50_ms'), p99_ms: med(r.http, 'p99_ms'), rps: med(r.http, 'rps') };
  const sql = { p50_ms: med(r.sql, 'p50_ms'), p99_ms: med(r.sql, 'p99_ms'), rps: med(r.sql, 'rps') };
  return {
    query: c.name,
    http,
    sql,
    ratio_p50: round(http.p50_ms / sql.p50_ms),
    index: r.index,
    expects_index: c.indexed,
    errors: r.http.reduce((a, f) => a + f.errors, 0),
  };
});

const markdown = [
  '### Query language (`npm run bench:queries`)',
  '',
  `${PORTFOLIOS.toLocaleString('en')} portfolios of ${USERS.toLocaleString('en')} users; ${CONCURRENCY} concurrent clients, ${ROUNDS} alternating rounds of ${SECONDS} s, medians; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine.`,
  'Service: `GET /portfolios/?query=…` over HTTP (parse, compile, count and first page of 20 in one transaction with row-level security, JSON answer).',
  'Hand-written SQL: the same count, page (and owner) written directly for `pg`, no HTTP.',
  '',
  '| query | service p50 ms | p99 ms | SQL p50 ms | p99 ms | p50 ratio | index used by the compiled query |',
  '|---|---|---|---|---|---|---|',
  ...summary.map((s) => `| ${s.query} | ${s.http.p50_ms} | ${s.http.p99_ms} | ${s.sql.p50_ms} | ${s.sql.p99_ms} | ${s.ratio_p50}× | ${s.index} |`),
  '',
  `Target ≤ 1.5× hand-written SQL: ${
    summary.every((s) => s.ratio_p50 <= 1.5)
      ? 'met'
      : `not met (${summary
          .filter((s) => s.ratio_p50 > 1.5)
          .map((s) => s.query)
          .join(', ')})`
  }. Errors: ${summary.reduce((a, s) => a + s.errors, 0)}.`,
].join('\n');

record('query-language', { portfolios: PORTFOLIOS, users: USERS, concurrency: CONCURRENCY, seconds: SECONDS, rounds: ROUNDS, results: summary }, markdown);
console.log(markdown);
await pool.end();
await platform.stop();
