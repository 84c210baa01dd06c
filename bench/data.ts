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
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { createApiKey, createTenant } from '@platform/management-service/admin/provisioning';
import { generateSample } from '@platform/data-service/sample/generate';
import { buildReferenceFile } from '@platform/data-service/store/reference-files';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import {
  FACTORS,
  FIELDS,
  SPLIT,
  directReferenceSql,
  directSearchSql,
  directUniverseSql,
  directXraySql,
  referenceBody as referenceBodyOf,
  searchBody,
  universeQuery,
  xrayQuery,
  ARROW_TYPE,
  IDENTITY,
  JSON_TYPE,
} from './lib/data-queries.ts';
import { measureUniverseExport } from './lib/data-export.ts';
import { dataMarkdown } from './lib/data-report.ts';
import { median, record, round, startBenchPlatform } from './lib/harness.ts';

const INSTRUMENTS = Number(process.env.BENCH_INSTRUMENTS ?? 100_000);
const REPS = Number(process.env.BENCH_REPS ?? 15);
const COLD_REPS = Number(process.env.BENCH_COLD_REPS ?? 5);
/** The fewest years that fill every factor metric: momentum (12-1 months) needs more than 262 closes. */
const YEARS = 2;
const QUERY_ISINS = Math.min(10_000, INSTRUMENTS);
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

  const referenceBody = referenceBodyOf(isins);

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

  // 5. The universe export, JSON and Arrow: server-side, the whole client path, each response coding.
  const { exportJson, exportArrow, server, client, loadBefore, loadAfter, codingRows } = await measureUniverseExport({
    url,
    universeQuery,
    headers,
    reps: REPS,
    codingReps: CODING_REPS,
    instruments: INSTRUMENTS,
    check,
    log,
  });

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
  const markdown = dataMarkdown({
    instruments: INSTRUMENTS,
    sample,
    years: YEARS,
    generationSeconds,
    reps: REPS,
    coldReps: COLD_REPS,
    results,
    queryIsins: QUERY_ISINS,
    arrowOverJson,
    arrowRatio,
    refArrow,
    searchRatio,
    cases,
    arrowDecodeMs,
    table,
    jsonDecodeMs,
    found,
    fields: FIELDS,
    loadBefore,
    loadAfter,
    server,
    client,
    serverRatio,
    encodingRatio,
    clientRatio,
    exportJson,
    exportArrow,
    codingReps: CODING_REPS,
    codingRows,
    checks,
  });

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
