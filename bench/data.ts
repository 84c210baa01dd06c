// Data service benchmark: a generated universe of 100,000 instruments, four requests of the data
// interface over HTTP (single client, sequential repetitions after a warm-up) against the same
// query written by hand and run on DuckDB in this process (a read-only instance of the same
// reference file, every row read into JS: the limit), alternating in one run; median and p90 time,
// response bytes, service / direct ratios. `npm run bench:data` (BENCH_INSTRUMENTS, BENCH_REPS and
// BENCH_COLD_REPS change the defaults of 100,000, 15 and 5). Then the universe export as JSON and
// as Arrow three ways: the service's answer function in this process (server-side encoding), the
// whole client path (request → decoded table or parsed JSON), and each response coding (bytes and
// time).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { tableFromIPC, type Table } from 'apache-arrow';
import { availableCodings, compressWith, type ContentCoding } from '@platform/shared';
import { rawRequest } from '@platform/test-support/raw-http';
import { createApiKey, createTenant } from '../management-service/src/admin/provisioning.ts';
import { generateSample } from '../data-service/src/sample/generate.ts';
import { buildReferenceFile } from '../data-service/src/store/reference-files.ts';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { median, record, round, startBenchPlatform } from './lib/harness.ts';

const INSTRUMENTS = Number(process.env.BENCH_INSTRUMENTS ?? 100_000);
const REPS = Number(process.env.BENCH_REPS ?? 15);
const COLD_REPS = Number(process.env.BENCH_COLD_REPS ?? 5);
/** The fewest years that fill every factor metric: momentum (12-1 months) needs more than 262 closes. */
const YEARS = 2;
const QUERY_ISINS = Math.min(10_000, INSTRUMENTS);
const FIELDS = ['NAME', 'ASSET_CLASS', 'CURRENCY', 'COUNTRY', 'REGION', 'SECTOR', 'MARKET_CAP', 'PRICE', 'PRICE_DATE', 'DIVIDEND_YIELD'];
const SPLIT = 'REGION_SECTOR';
const FACTORS = ['value', 'growth', 'momentum', 'stability', 'financial_health', 'profitability', 'size', 'dividend'];
const MIN_MARKET_CAP = 5e9;
const JSON_TYPE = 'application/json';
const ARROW_TYPE = 'application/vnd.apache.arrow.stream';
/** Calls of the existing cases ask for no response coding (the loopback has no use for one); the coding table measures each. */
const IDENTITY = { 'accept-encoding': 'identity' };
const CODING_REPS = Number(process.env.BENCH_CODING_REPS ?? 5);

const log = (line: string) => console.log(`[bench] ${line}`);
const root = fileURLToPath(new URL('..', import.meta.url));

const work = mkdtempSync(join(tmpdir(), 'platform-bench-data-'));
chmodSync(work, 0o755);
const referenceDir = join(work, 'reference');

log(`generating ${INSTRUMENTS.toLocaleString('en')} instruments with ${YEARS} years of daily prices`);
const generationStarted = performance.now();
let summary: Awaited<ReturnType<typeof generateSample>> | undefined;
const referenceFile = await buildReferenceFile(referenceDir, 'bench', async (conn) => {
  summary = await generateSample(conn, { instruments: INSTRUMENTS, years: YEARS, seed: 20261122 });
});
const generationSeconds = round((performance.now() - generationStarted) / 1000, 1);
const sample = summary!;
log(`generated in ${generationSeconds} s: ${sample.prices.toLocaleString('en')} prices`);

const platform = await startBenchPlatform({ LOG_LEVEL: 'warn' });
let service: ChildProcess | undefined;
let direct: DuckDBInstance | undefined;
let conn: DuckDBConnection | undefined;
try {
  const port = await freePort();
  service = spawn(process.execPath, ['--import', 'tsx', 'data-service/src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: '0',
      DATABASE_URL: platform.databaseUrl,
      NATS_URL: platform.natsUrl,
      DUCKDB_PATH: join(work, 'data.duckdb'),
      REFERENCE_DIR: referenceDir,
      REFERENCE_RELOAD_MS: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'data service',
    async () => {
      if (service!.exitCode !== null) throw new Error(`exited with ${service!.exitCode}`);
      if (!(await fetch(`${url}/readyz`)).ok) throw new Error('not ready');
    },
    60_000,
  );

  const keyHeaders = async (tenant: string) => ({ 'x-tenant-id': tenant, 'x-api-key': (await createApiKey(platform.db, tenant)).api_key });
  const headers = await keyHeaders(platform.tenantId);

  direct = await DuckDBInstance.create(referenceFile, { access_mode: 'READ_ONLY', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  conn = await direct.connect();
  const rowsOf = async (sql: string, values: DuckDBValue[] = []) => (await conn!.runAndReadAll(sql, values)).getRows();

  // 10,000 distinct ISINs of the universe in a random order (seeded, so every run asks the same).
  const universe = (await rowsOf('select isin from instruments order by isin')).map(([isin]) => String(isin));
  let state = 20261122;
  const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  for (let i = universe.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [universe[i], universe[j]] = [universe[j]!, universe[i]!];
  }
  const isins = universe.slice(0, QUERY_ISINS);

  type Answer = { ms: number; bytes: Uint8Array };
  async function call(method: 'GET' | 'POST', path: string, accept: string, body?: unknown, as = headers): Promise<Answer> {
    const started = performance.now();
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { ...as, ...IDENTITY, accept, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${Buffer.from(bytes).toString('utf8').slice(0, 500)}`);
    return { ms, bytes };
  }
  /** `ms`: the query run and every row read into JS values; `queryMs`: the part before the conversion to JS values. */
  async function directRun(sql: string, values: DuckDBValue[] = []): Promise<{ ms: number; queryMs: number; rows: DuckDBValue[][] }> {
    const started = performance.now();
    const result = await conn!.runAndReadAll(sql, values);
    const queryMs = performance.now() - started;
    const rows = result.getRows();
    return { ms: performance.now() - started, queryMs, rows };
  }

  const referenceBody = { instrument_ids: isins, fields: FIELDS, fields_extra: [] };
  const fieldColumns = (alias: string) =>
    FIELDS.map((f) => f.toLowerCase())
      .map((c) => (c === 'price' ? `${alias}.price::double as price` : `${alias}.${c}`))
      .join(', ');
  // The ISINs travel as one comma-joined string, as the service sends them (binding a long list costs more).
  const directReferenceSql = `with ids as (select string_split($1, ',') as l),
      req as (select unnest(l) as isin, generate_subscripts(l, 1) as ord from ids)
    select i.isin, ${fieldColumns('i')} from req join instruments i on i.isin = req.isin order by req.ord`;
  const universeQuery = `?universe_name=GLOBAL&${FIELDS.map((f) => `fields=${f}`).join('&')}`;
  const directUniverseSql = `select i.isin, ${fieldColumns('i')}
    from universes u join instruments i on i.isin = u.isin where u.universe_name = 'GLOBAL' order by i.isin`;

  // X-Ray stars by hand: the mid-rank quintile within each (region, sector) group of GLOBAL,
  // min(5, 1 + floor(5 · (below + at_or_below) / (2 · n))) over the members holding the metric.
  const starsOf = (m: string) =>
    `case when ${m} is null then null else least(5, 1 + (5 * (rank() over (g order by ${m} asc nulls last) - 1 + count(${m}) over (g order by ${m} asc nulls last))) // (2 * count(${m}) over g))::integer end`;
  const globalMetricsSql = `select i.isin, i.name, i.asset_class, i.market_cap, i.dividend_yield, i.region, i.sector,
      ${FACTORS.map((f) => `case when isnan(fm.${f}) then null else fm.${f} end as ${f}`).join(', ')}
    from universes u join instruments i on i.isin = u.isin left join factor_metrics fm on fm.isin = u.isin
    where u.universe_name = 'GLOBAL'`;
  const directXraySql = `select isin, ${FACTORS.map((f) => `${starsOf(f)} as ${f}_stars`).join(',\n      ')}
    from (${globalMetricsSql}) window g as (partition by region, sector) order by isin`;
  const xrayQuery = `?universe_name=GLOBAL&group_split_type=${SPLIT}&${FACTORS.map((f) => `fields=${f.toUpperCase()}_STARS`).join('&')}`;

  const searchBody = {
    query: { reference: `$ASSET_CLASS == 'EQUITY' & $MARKET_CAP > ${MIN_MARKET_CAP}`, xray: '$VALUE_STARS >= 4' },
    sorting_variables: { reference: ['DIVIDEND_YIELD'], sorting_order: ['DIVIDEND_YIELD'] },
    xray_parameters: { instrument_universe: 'GLOBAL', group_split_type: SPLIT },
  };
  // Only the stars the filter reads: the least work that gives the same answer.
  const directSearchSql = `select isin, name from (
      select isin, name, asset_class, market_cap, dividend_yield, ${starsOf('value')} as value_stars
      from (${globalMetricsSql}) window g as (partition by region, sector))
    where asset_class = 'EQUITY' and market_cap > ${MIN_MARKET_CAP} and value_stars >= 4
    order by dividend_yield desc nulls last, isin asc`;

  type Case = { name: string; service: number[]; direct: number[]; directQuery: number[]; bytes: number };
  const cases: Case[] = [];
  /** Warm-up of both sides, then `reps` alternating pairs (service first, then direct). */
  async function measure(
    name: string,
    serviceCall: () => Promise<Answer>,
    directCall: () => Promise<{ ms: number; queryMs: number }>,
    reps = REPS,
    warmups = 2,
  ): Promise<Case> {
    log(`${name}: ${warmups} warm-up and ${reps} measured calls each`);
    for (let i = 0; i < warmups; i++) {
      await serviceCall();
      await directCall();
    }
    const c: Case = { name, service: [], direct: [], directQuery: [], bytes: 0 };
    for (let i = 0; i < reps; i++) {
      const s = await serviceCall();
      c.service.push(s.ms);
      c.bytes = s.bytes.byteLength;
      const d = await directCall();
      c.direct.push(d.ms);
      c.directQuery.push(d.queryMs);
    }
    cases.push(c);
    return c;
  }

  const mb = (n: number) => (n >= 1e6 ? `${round(n / 1e6, 2)} MB` : `${round(n / 1e3, 1)} kB`);

  // Every answer is checked against the direct query once, so both sides are known to do the same work.
  const checks: string[] = [];
  const check = (ok: boolean, what: string) => {
    checks.push(`${ok ? 'ok' : 'MISMATCH'}: ${what}`);
    if (!ok) process.exitCode = 1;
  };

  // 1. Reference query, JSON and Arrow.
  const referenceDirect = () => directRun(directReferenceSql, [isins.join(',')]);
  const jsonAnswer = await call('POST', '/data/reference/query/', JSON_TYPE, referenceBody);
  const arrowAnswer = await call('POST', '/data/reference/query/', ARROW_TYPE, referenceBody);
  const expected = (await referenceDirect()).rows;
  const json = JSON.parse(Buffer.from(jsonAnswer.bytes).toString('utf8')) as { data: Record<string, Record<string, unknown>> };
  const jsonKeys = Object.keys(json.data);
  check(
    jsonKeys.length === QUERY_ISINS && jsonKeys.every((k, i) => k === String(expected[i]![0])),
    `reference query JSON: ${jsonKeys.length} instruments in request order`,
  );
  const decodeStarted = performance.now();
  const table = tableFromIPC(arrowAnswer.bytes);
  const arrowDecodeMs = performance.now() - decodeStarted;
  const arrowIsins = table.getChild('instrument_id')!.toArray() as string[];
  check(
    table.numRows === QUERY_ISINS && arrowIsins.every((k, i) => k === String(expected[i]![0])),
    `reference query Arrow: tableFromIPC reads ${table.numRows} rows (${table.schema.fields.length} columns) in request order`,
  );
  const jsonDecodeStarted = performance.now();
  JSON.parse(Buffer.from(jsonAnswer.bytes).toString('utf8'));
  const jsonDecodeMs = performance.now() - jsonDecodeStarted;

  const refJson = await measure(
    `reference query, ${QUERY_ISINS.toLocaleString('en')} ISINs × ${FIELDS.length} fields, JSON`,
    () => call('POST', '/data/reference/query/', JSON_TYPE, referenceBody),
    referenceDirect,
  );
  const refArrow = await measure(
    `reference query, ${QUERY_ISINS.toLocaleString('en')} ISINs × ${FIELDS.length} fields, Arrow`,
    () => call('POST', '/data/reference/query/', ARROW_TYPE, referenceBody),
    referenceDirect,
  );

  // 2. Universe export, JSON and Arrow.
  const universeDirect = () => directRun(directUniverseSql);
  const universeArrow = tableFromIPC((await call('GET', `/data/reference/universe/${universeQuery}`, ARROW_TYPE)).bytes);
  check(universeArrow.numRows === INSTRUMENTS, `universe export Arrow: ${universeArrow.numRows} rows`);
  await measure(
    `universe export GLOBAL (${INSTRUMENTS.toLocaleString('en')} rows × ${FIELDS.length} fields), JSON`,
    () => call('GET', `/data/reference/universe/${universeQuery}`, JSON_TYPE),
    universeDirect,
  );
  await measure(
    `universe export GLOBAL (${INSTRUMENTS.toLocaleString('en')} rows × ${FIELDS.length} fields), Arrow`,
    () => call('GET', `/data/reference/universe/${universeQuery}`, ARROW_TYPE),
    universeDirect,
  );

  // 3. X-Ray: first call of a tenant (nothing cached), then the cached answer. Every cold call is
  // a new tenant (the cache is per tenant), whose API key is verified beforehand by a small request.
  const xrayDirect = () => directRun(directXraySql);
  let coldTenants = 0;
  const coldXray = async (): Promise<Answer> => {
    const tenant = `bench-xray-${++coldTenants}`;
    await createTenant(platform.db, { id: tenant });
    const as = await keyHeaders(tenant);
    await call('POST', '/data/reference/query/', JSON_TYPE, { instrument_ids: [isins[0]], fields: ['NAME'], fields_extra: [] }, as);
    return call('GET', `/xray/universe/${xrayQuery}`, JSON_TYPE, undefined, as);
  };
  const xrayAnswer = JSON.parse(Buffer.from((await coldXray()).bytes).toString('utf8')) as [{ data: Record<string, Record<string, number | null>> }];
  const xrayExpected = (await xrayDirect()).rows;
  const xrayMatches = xrayExpected.filter(([isin, ...stars]) =>
    FACTORS.every((f, i) => (xrayAnswer[0].data[String(isin)]?.[`${f.toUpperCase()}_STARS`] ?? null) === (stars[i] ?? null)),
  ).length;
  check(
    xrayMatches === INSTRUMENTS && Object.keys(xrayAnswer[0].data).length === INSTRUMENTS,
    `X-Ray: stars of all 8 factors equal for ${xrayMatches} of ${INSTRUMENTS} instruments`,
  );
  await measure(`X-Ray GLOBAL, ${SPLIT}, 8 factors, first call (cold cache)`, coldXray, xrayDirect, COLD_REPS, 1);
  await measure(`X-Ray GLOBAL, ${SPLIT}, 8 factors, cached`, () => call('GET', `/xray/universe/${xrayQuery}`, JSON_TYPE), xrayDirect);

  // 4. Smart search: three filters (two reference, one X-Ray) and a sort.
  const searchDirect = () => directRun(directSearchSql);
  const found = (
    JSON.parse(Buffer.from((await call('POST', '/smart-search/', JSON_TYPE, searchBody)).bytes).toString('utf8')) as {
      data: { instruments: { isin: string }[] };
    }
  ).data.instruments;
  const searchExpected = (await searchDirect()).rows;
  check(
    found.length === searchExpected.length && found.every((f, i) => f.isin === String(searchExpected[i]![0])),
    `smart search: the same ${found.length} instruments in the same order`,
  );
  await measure(
    'smart search: 3 filters (ASSET_CLASS, MARKET_CAP, VALUE_STARS) + sort by DIVIDEND_YIELD',
    () => call('POST', '/smart-search/', JSON_TYPE, searchBody),
    searchDirect,
  );

  // 5. The universe export, JSON and Arrow. (a) Server-side: the times the service reports for
  // making each answer (Server-Timing): the whole (its DuckDB queries and the encoding, no HTTP)
  // and the part spent waiting for DuckDB (queries, fetching results); the rest is the encoding.
  // (b) The whole client path over HTTP: request → a decoded apache-arrow table, or → JSON.parse.
  // (c) Each response coding: bytes on the wire, the time to compress the answer, and the client
  // path with that Accept-Encoding.
  const timed = async <T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> => {
    const started = performance.now();
    const value = await work();
    return { ms: performance.now() - started, value };
  };
  const universeUrl = `${url}/data/reference/universe/${universeQuery}`;
  /** The service's own times for the answer (Server-Timing), and the answer. */
  const serverSide = async (format: 'json' | 'arrow'): Promise<{ ms: number; queryMs: number; bytes: Uint8Array }> => {
    const res = await fetch(universeUrl, { headers: { ...headers, ...IDENTITY, accept: format === 'json' ? JSON_TYPE : ARROW_TYPE } });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const timing = /^answer;dur=([\d.]+), query;dur=([\d.]+)$/.exec(res.headers.get('server-timing') ?? '');
    if (res.status !== 200 || !timing) throw new Error(`universe export: ${res.status} ${res.headers.get('server-timing')}`);
    return { ms: Number(timing[1]), queryMs: Number(timing[2]), bytes };
  };

  // Check: the Arrow answer holds every value of the JSON answer.
  const exportJson = (await serverSide('json')).bytes;
  const exportArrow = (await serverSide('arrow')).bytes;
  const exportTable = tableFromIPC(exportArrow);
  const mismatches = compareWithJson(exportTable, JSON.parse(Buffer.from(exportJson).toString('utf8')) as { data: Record<string, Record<string, unknown>> });
  check(
    mismatches === 0,
    `universe export: the Arrow answer's ${exportTable.numRows} rows × ${exportTable.numCols} columns equal the JSON answer value for value (${mismatches} differ)`,
  );

  // The machine's 1-minute load average around these rounds: it is shared, and the ratios move with it.
  const loadBefore = loadavg()[0]!;
  log(`server-side universe export: JSON and Arrow, 2 warm-up and ${REPS} measured rounds`);
  const server = { json: [] as number[], jsonQuery: [] as number[], arrow: [] as number[], arrowQuery: [] as number[], arrowEncoding: [] as number[] };
  for (let i = 0; i < REPS + 2; i++) {
    const j = await serverSide('json');
    const a = await serverSide('arrow');
    if (i < 2) continue;
    server.json.push(j.ms);
    server.jsonQuery.push(j.queryMs);
    server.arrow.push(a.ms);
    server.arrowQuery.push(a.queryMs);
    server.arrowEncoding.push(a.ms - a.queryMs);
  }

  /** Request → decoded: a table for Arrow, parsed JSON; the answer asked for with `coding` (identity: none). */
  const clientPath = (format: 'json' | 'arrow', coding: ContentCoding | 'identity' = 'identity') =>
    timed(async () => {
      const res = await fetch(universeUrl, { headers: { ...headers, accept: format === 'json' ? JSON_TYPE : ARROW_TYPE, 'accept-encoding': coding } });
      if (res.status !== 200) throw new Error(`universe export: ${res.status}`);
      if (format === 'json') return Object.keys((JSON.parse(await res.text()) as { data: object }).data).length;
      return tableFromIPC(new Uint8Array(await res.arrayBuffer())).numRows;
    });
  log(`client path of the universe export: JSON and Arrow, 2 warm-up and ${REPS} measured rounds`);
  const client = { json: [] as number[], arrow: [] as number[] };
  for (let i = 0; i < REPS + 2; i++) {
    const j = await clientPath('json');
    const a = await clientPath('arrow');
    if (i === 0)
      check(j.value === INSTRUMENTS && a.value === INSTRUMENTS, `client path: JSON.parse finds ${j.value} instruments, tableFromIPC ${a.value} rows`);
    if (i < 2) continue;
    client.json.push(j.ms);
    client.arrow.push(a.ms);
  }

  const loadAfter = loadavg()[0]!;
  log(`response codings of the universe export (${availableCodings.join(', ')}), ${CODING_REPS} measured rounds each`);
  type CodingRow = { format: 'JSON' | 'Arrow'; coding: string; available: boolean; bytes?: number; compress_ms?: number; client_ms?: number };
  const codingRows: CodingRow[] = [];
  for (const format of ['json', 'arrow'] as const) {
    const plain = Buffer.from(format === 'json' ? exportJson : exportArrow);
    for (const coding of ['identity', 'gzip', 'br', 'zstd'] as const) {
      const row: CodingRow = { format: format === 'json' ? 'JSON' : 'Arrow', coding, available: coding === 'identity' || availableCodings.includes(coding) };
      codingRows.push(row);
      if (!row.available) continue;
      const wire = await rawRequest(universeUrl, { headers: { ...headers, accept: format === 'json' ? JSON_TYPE : ARROW_TYPE, 'accept-encoding': coding } });
      check(
        (wire.headers['content-encoding'] ?? 'identity') === coding,
        `${row.format} asked as ${coding}: answered ${wire.headers['content-encoding'] ?? 'identity'}, ${mb(wire.bytes.length)}`,
      );
      row.bytes = wire.bytes.length;
      const compress: number[] = [];
      const path: number[] = [];
      await clientPath(format, coding);
      for (let i = 0; i < CODING_REPS; i++) {
        if (coding !== 'identity') compress.push((await timed(() => compressWith(coding, plain))).ms);
        path.push((await clientPath(format, coding)).ms);
      }
      row.compress_ms = coding === 'identity' ? 0 : round(median(compress), 1);
      row.client_ms = round(median(path), 1);
    }
  }

  const at = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * values.length) - 1)]!;
  const results = cases.map((c) => ({
    case: c.name,
    service_median_ms: round(median(c.service), 1),
    service_p90_ms: round(at(c.service, 0.9), 1),
    bytes: c.bytes,
    direct_median_ms: round(median(c.direct), 1),
    direct_p90_ms: round(at(c.direct, 0.9), 1),
    direct_query_median_ms: round(median(c.directQuery), 1),
    ratio: round(median(c.service) / median(c.direct)),
    ratio_to_query: round(median(c.service) / median(c.directQuery)),
    service_ms: c.service.map((v) => round(v, 1)),
    direct_ms: c.direct.map((v) => round(v, 1)),
  }));
  const arrowOverJson = round(median(refJson.service) / median(refArrow.service));
  const arrowRatio = round(median(refArrow.service) / median(refArrow.direct));
  const searchRatio = results.at(-1)!.ratio;
  const serverRatio = round(median(server.json) / median(server.arrow));
  const encodingRatio = round(median(server.json) / median(server.arrowEncoding));
  const clientRatio = round(median(client.json) / median(client.arrow));
  const met = (ratio: number) => (ratio >= 3 ? 'met' : '**not met**');
  const targets: Record<string, string> = {
    [refArrow.name]: `≤ 1.5×: ${arrowRatio <= 1.5 ? 'met' : '**not met**'}`,
    [cases.at(-1)!.name]: `≤ 1.5×: ${searchRatio <= 1.5 ? 'met' : '**not met**'}`,
  };

  const markdown = [
    '### Data service (`npm run bench:data`)',
    '',
    `Generated universe: ${INSTRUMENTS.toLocaleString('en')} instruments (${sample.stocks.toLocaleString('en')} stocks, ${sample.bonds.toLocaleString('en')} bonds, ${sample.etfs.toLocaleString('en')} ETFs), ${YEARS} years of daily prices (${sample.prices.toLocaleString('en')} rows, the fewest years that fill every factor metric); generating it into a reference file took ${generationSeconds} s.`,
    `Single client, sequential: ${REPS} measured calls per case after 2 warm-up calls (cold X-Ray: ${COLD_REPS}, each the first call of a new tenant), service and direct alternating; medians and p90; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine.`,
    'Service: the data service in its own process over HTTP (`fetch`, API key, contract validation, the answer read to its last byte). Direct (the limit): the same query written by hand and run in the bench process on a read-only DuckDB instance of the same reference file, every row read into JS (`runAndReadAll` + `getRows`), no HTTP and no encoding; the column after it is the time until `runAndReadAll` returned (query run, result chunks fetched, before converting them to JS values).',
    '',
    '| case | service median ms | p90 ms | bytes | direct median ms | of which the query, before JS values | service / direct | target met? |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.case} | ${r.service_median_ms} | ${r.service_p90_ms} | ${mb(r.bytes)} | ${r.direct_median_ms} | ${r.direct_query_median_ms} | ${r.ratio}× | ${targets[r.case] ?? '—'} |`,
    ),
    '',
    `Reference query of ${QUERY_ISINS.toLocaleString('en')} ISINs, JSON time / Arrow time: ${arrowOverJson} (target: Arrow ≥ 3× faster than JSON, ${arrowOverJson >= 3 ? 'met' : '**not met**'}); Arrow / direct DuckDB: ${arrowRatio}× (target ≤ 1.5×: ${arrowRatio <= 1.5 ? 'met' : '**not met**'}), ${round(median(refArrow.service) / median(refArrow.directQuery))}× of the direct query before its rows become JS values.`,
    `Decoding in the client, once: \`tableFromIPC\` of the Arrow answer ${round(arrowDecodeMs, 1)} ms (${table.numRows.toLocaleString('en')} rows), \`JSON.parse\` of the JSON answer ${round(jsonDecodeMs, 1)} ms.`,
    `Smart search finds ${found.length.toLocaleString('en')} instruments; its direct query computes only the VALUE stars the filter reads. The X-Ray direct query computes all 8 factors, without a cache.`,
    '',
    `#### Universe export GLOBAL (${INSTRUMENTS.toLocaleString('en')} rows × ${FIELDS.length} fields): Arrow against JSON`,
    '',
    `Server-side: the times the service reports for making each answer (\`Server-Timing: answer;dur=…, query;dur=…\`: the whole, its DuckDB queries and the JSON or Arrow encoding, no HTTP and no compression; and the part spent waiting for DuckDB), JSON and Arrow alternating, ${REPS} rounds after 2 warm-up rounds. Client path: \`fetch\` of the service over HTTP to a decoded table (\`tableFromIPC\`, apache-arrow; it decodes strings when they are read) or to \`JSON.parse\` of the text, no response coding, alternating, ${REPS} rounds. The machine's 1-minute load average went from ${round(loadBefore, 1)} to ${round(loadAfter, 1)} during these rounds (2 cores, shared with other work).`,
    '',
    '| what | JSON median ms | Arrow median ms | JSON / Arrow | target |',
    '|---|---|---|---|---|',
    `| server-side answer (DuckDB queries + encoding) | ${round(median(server.json), 1)} | ${round(median(server.arrow), 1)} | ${serverRatio}× | ≥ 3×: ${met(serverRatio)} |`,
    `| of which waiting for DuckDB (queries, fetching results) | ${round(median(server.jsonQuery), 1)} | ${round(median(server.arrowQuery), 1)} | — | — |`,
    `| the JSON answer against the Arrow encoding alone (the Arrow answer less its waits for DuckDB) | ${round(median(server.json), 1)} | ${round(median(server.arrowEncoding), 1)} | ${encodingRatio}× | ≥ 3×: ${met(encodingRatio)} |`,
    `| client path: request → decoded table / parsed JSON | ${round(median(client.json), 1)} | ${round(median(client.arrow), 1)} | ${clientRatio}× | ≥ 3×: ${met(clientRatio)} |`,
    '',
    `The target reads two ways: the whole Arrow answer against the whole JSON answer (first row), or the Arrow encoding against the JSON answer (third row). The Arrow answer waits ${round(median(server.arrowQuery), 1)} ms for DuckDB (its semi-join and sort of the ${INSTRUMENTS.toLocaleString('en')} rows and the ${Math.ceil(INSTRUMENTS / 2048)} result chunks, each fetched by one asynchronous call, the next while the current one is copied), ${round((100 * median(server.arrowQuery)) / median(server.arrow))} % of it${
      serverRatio >= 3
        ? ''
        : `: an encoding that cost nothing would leave the whole answers at ${round(median(server.json) / median(server.arrowQuery))}× (JSON answer / Arrow waits), which is what limits the first reading`
    }. The encoding copies the chunks' vectors into Arrow buffers (strings in runs, categories into dictionaries, no JS value per cell) and writes the IPC stream. Answer sizes: JSON ${mb(exportJson.byteLength)}, Arrow ${mb(exportArrow.byteLength)} (categories dictionary-encoded).`,
    '',
    `Response codings of the same export (Node.js ${process.version}; levels: gzip 1, br quality 1, zstd 1): bytes on the wire, median time to compress the answer (the service does it per request), and the client path with that Accept-Encoding (decompression by \`fetch\` included), ${CODING_REPS} rounds each.`,
    '',
    '| answer | coding | bytes | of identity | compress ms | client path ms |',
    '|---|---|---|---|---|---|',
    ...codingRows.map((r) => {
      if (!r.available) return `| ${r.format} | ${r.coding} | not in Node.js ${process.version} | — | — | — |`;
      const identity = codingRows.find((x) => x.format === r.format && x.coding === 'identity')!.bytes!;
      return `| ${r.format} | ${r.coding} | ${mb(r.bytes!)} | ${round((100 * r.bytes!) / identity)} % | ${r.compress_ms} | ${r.client_ms} |`;
    }),
    '',
    `Checks (each answer against the direct query): ${checks.join('; ')}.`,
  ].join('\n');

  record(
    'data',
    {
      instruments: INSTRUMENTS,
      years: YEARS,
      prices: sample.prices,
      generation_s: generationSeconds,
      reps: REPS,
      cold_reps: COLD_REPS,
      results,
      reference_arrow_over_json: arrowOverJson,
      reference_arrow_over_direct: arrowRatio,
      smart_search_over_direct: searchRatio,
      smart_search_found: found.length,
      decode_ms: { arrow: round(arrowDecodeMs, 1), json: round(jsonDecodeMs, 1) },
      universe_export: {
        bytes: { json: exportJson.byteLength, arrow: exportArrow.byteLength },
        server_ms: {
          json: round(median(server.json), 1),
          json_query: round(median(server.jsonQuery), 1),
          arrow: round(median(server.arrow), 1),
          arrow_query: round(median(server.arrowQuery), 1),
          arrow_encoding: round(median(server.arrowEncoding), 1),
        },
        server_json_over_arrow: serverRatio,
        server_json_over_arrow_encoding: encodingRatio,
        client_ms: { json: round(median(client.json), 1), arrow: round(median(client.arrow), 1) },
        client_json_over_arrow: clientRatio,
        load_average: { before: round(loadBefore, 2), after: round(loadAfter, 2) },
        server_runs_ms: Object.fromEntries(Object.entries(server).map(([k, v]) => [k, v.map((x) => round(x, 1))])),
        client_runs_ms: { json: client.json.map((v) => round(v, 1)), arrow: client.arrow.map((v) => round(v, 1)) },
        codings: codingRows,
      },
      checks,
    },
    markdown,
  );
  console.log(markdown);
} finally {
  conn?.closeSync();
  direct?.closeSync();
  if (service && service.exitCode === null && service.signalCode === null) {
    const exited = new Promise((r) => service!.once('exit', r));
    service.kill('SIGTERM');
    const timer = setTimeout(() => service!.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
  await platform.stop();
  rmSync(work, { recursive: true, force: true });
}

/** Cells of an Arrow table that differ from the JSON answer `{data: {isin: {key: value}}}` (dates as YYYY-MM-DD, dictionaries decoded). */
function compareWithJson(table: Table, json: { data: Record<string, Record<string, unknown>> }): number {
  const isins = Object.keys(json.data);
  let differ = Math.abs(isins.length - table.numRows);
  const columns = table.schema.fields.map((f) => ({ name: f.name, date: String(f.type).startsWith('Date'), vector: table.getChild(f.name)! }));
  for (let i = 0; i < Math.min(isins.length, table.numRows); i++) {
    const record = json.data[isins[i]!]!;
    if (columns[0]!.vector.get(i) !== isins[i]) differ++;
    for (const { name, date, vector } of columns.slice(1)) {
      const value = vector.isValid(i) ? vector.get(i) : null;
      const cell = date && value !== null ? new Date(value as number).toISOString().slice(0, 10) : value;
      if (cell !== record[name]) differ++;
    }
  }
  return differ;
}
