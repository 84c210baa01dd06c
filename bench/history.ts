// Portfolio history benchmark: the calculator of data-service/src/history on 10 years of business
// days (2,520) of a portfolio with 200 versions of 20 instruments (5 in USD, EUR base), 130 flows and
// a model to compare with, synthetic and seeded; in this process, median of BENCH_REPS runs after
// warm-up runs. The same data, written to a file, goes to a numpy baseline
// (bench/baselines/history.py) that computes value, TWR and drawdown on its own; the series are
// compared day by day and both are timed. Then the data service's part server side
// (bench/lib/history-responder.ts): a generated 10-year reference file, the real responder over
// NATS, request to reply, and the same answer in process without the bus. Last, the whole
// `GET /portfolios/{id}/history/` over HTTP with both services in their own processes and the
// portfolio's 200 versions in Postgres (bench/lib/history-http.ts), its answer compared with numpy's
// on the same data. `npm run bench:history` (BENCH_REPS changes the 21 runs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { historySeries, portfolioHistory } from '@platform/data-service/history/calculate';
import type { FxTable, HistoryFlow, HistoryRequest, HistoryVersion, PriceTable } from '@platform/data-service/history/input';
import { toCents, toReturn } from '@platform/data-service/history/rounding';
import { formatDay, parseDay } from '@platform/data-service/simulation/dates';
import { ensurePythonModule } from '@platform/dev-stack/os-packages';
import { median, record, round } from './lib/harness.ts';
import { measureHistoryHttp, type NumpyCase } from './lib/history-http.ts';
import { measureHistoryResponder } from './lib/history-responder.ts';
import { seededRandom } from '@platform/test-support/random';

const REPS = Number(process.env.BENCH_REPS ?? 21);
const WARMUP = 5;
const TARGET_MS = 50;
const DAYS = 2520;
const INSTRUMENTS = 20;
const USD_INSTRUMENTS = 5;
const VERSIONS = 200;
const PYTHON = process.env.BENCH_PYTHON ?? 'python3';
const log = (line: string) => console.log(`[bench] ${line}`);
const root = fileURLToPath(new URL('..', import.meta.url));

function synthetic(seed: number) {
  const random = seededRandom(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const days: number[] = [];
  for (let d = parseDay('2016-01-04')!; days.length < DAYS; d++) if ((d + 4) % 7 !== 0 && (d + 4) % 7 !== 6) days.push(d);
  const isins = Array.from({ length: INSTRUMENTS }, (_, i) => `XS${String(i).padStart(10, '0')}`);
  const currencies = isins.map((_, i) => (i < USD_INSTRUMENTS ? 'USD' : 'EUR'));
  const closes = isins.map(() => {
    const c = new Float64Array(DAYS);
    c[0] = 20 + 180 * random();
    for (let t = 1; t < DAYS; t++) c[t] = c[t - 1]! * Math.exp(0.0003 + 0.012 * normal());
    return c;
  });
  const usd = new Float64Array(DAYS);
  usd[0] = 0.9;
  for (let t = 1; t < DAYS; t++) usd[t] = usd[t - 1]! * Math.exp(0.004 * normal());
  const at = (t: number) => `${formatDay(days[t]!)}T${String(8 + Math.floor(random() * 10)).padStart(2, '0')}:30:00Z`;
  const changeDays = [0, ...Array.from({ length: VERSIONS - 1 }, () => 1 + Math.floor(random() * (DAYS - 1)))].sort((a, b) => a - b);
  const versions: HistoryVersion[] = changeDays.map((t) => {
    const holdings: Record<string, string> = {};
    isins.forEach((isin) => {
      if (random() < 0.85) holdings[isin] = (10 + 500 * random()).toFixed(4);
    });
    holdings.$EUR = (20_000 * random()).toFixed(2);
    holdings.$USD = (5_000 * random()).toFixed(2);
    return { from: at(t), holdings };
  });
  versions.sort((a, b) => a.from.localeCompare(b.from));
  const flows: HistoryFlow[] = [];
  for (let t = 20; t < DAYS; t += 21) flows.push({ at: at(t), amount: '1000.00', currency: 'EUR' });
  for (let k = 0; k < 10; k++)
    flows.push({ at: at(1 + Math.floor(random() * (DAYS - 1))), amount: (-(2000 + 3000 * random())).toFixed(2), currency: k % 2 ? 'USD' : 'EUR' });
  flows.sort((a, b) => a.at.localeCompare(b.at));
  const weights = Object.fromEntries(isins.map((isin) => [isin, 0.045]));
  const request: HistoryRequest = {
    versions,
    flows,
    base_currency: 'EUR',
    from: formatDay(days[0]!),
    to: formatDay(days[DAYS - 1]!),
    frequency: 'D',
    model: { weights, cash_weight: 0.1 },
  };
  const prices: PriceTable = { days: Int32Array.from(days), isins, currencies, closes };
  const fx: FxTable = new Map([['USD', usd]]);
  return { request, prices, fx };
}

function timeIt(work: () => unknown): number[] {
  for (let k = 0; k < WARMUP; k++) work();
  return Array.from({ length: REPS }, () => {
    const started = performance.now();
    work();
    return performance.now() - started;
  });
}

type Baseline = { numpy: string; times_ms: number[]; value: number[]; twr: number[]; drawdown: number[] };

const { request, prices, fx } = synthetic(42);
const loadBefore = round(loadavg()[0]!);
const runs = {
  daily: timeIt(() => portfolioHistory(request, prices, fx)),
  weekly: timeIt(() => portfolioHistory({ ...request, frequency: 'W' }, prices, fx)),
  monthly: timeIt(() => portfolioHistory({ ...request, frequency: 'M' }, prices, fx)),
  series: timeIt(() => historySeries(request, prices, fx)),
};
const series = historySeries(request, prices, fx);
const answer = portfolioHistory(request, prices, fx);
const answerBytes = Buffer.byteLength(JSON.stringify(answer));

const numpyReady = ensurePythonModule(PYTHON, 'numpy', 'python3-numpy', log);
if (!numpyReady) log(`${PYTHON} cannot import numpy (and it could not be installed): the numpy baseline is skipped`);
/** bench/baselines/history.py on `input` (written to a file), timed inside Python. */
function runNumpy(input: NumpyCase): Baseline | undefined {
  if (!numpyReady) return undefined;
  const work = mkdtempSync(join(tmpdir(), 'platform-bench-history-'));
  try {
    const file = join(work, 'history.json');
    writeFileSync(file, JSON.stringify({ ...input, warmup: WARMUP, reps: REPS }));
    const out = execFileSync(PYTHON, [join(root, 'bench/baselines/history.py'), file], { maxBuffer: 1 << 26 });
    return JSON.parse(out.toString()) as Baseline;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const comparison = { value: NaN, twr: NaN, drawdown: NaN };
const dayOf = (text: string) => Math.floor(Date.parse(text) / 86_400_000);
const columns = [...prices.isins, '$EUR', '$USD'];
const baseline = runNumpy({
  days: Array.from(prices.days),
  closes: prices.closes.map((c) => Array.from(c)),
  currencies: [...prices.currencies],
  fx: { USD: Array.from(fx.get('USD')!) },
  columns,
  versions: request.versions.map((v) => ({ day: dayOf(v.from), units: columns.map((c) => Number(v.holdings[c] ?? 0)) })),
  flows: request.flows.map((f) => ({ day: dayOf(f.at), amount: Number(f.amount), currency: f.currency })),
});
if (baseline) {
  const maxRelative = (mine: Float64Array, theirs: number[], shift = 0) =>
    mine.reduce((worst, x, t) => Math.max(worst, Math.abs(x + shift - (theirs[t]! + shift)) / Math.max(1, Math.abs(theirs[t]! + shift))), 0);
  // TWR and drawdown compared as the index and index/peak (1 + each), relative to them.
  comparison.value = maxRelative(series.daily.value, baseline.value);
  comparison.twr = maxRelative(
    series.daily.index,
    baseline.twr.map((r) => r + 1),
  );
  comparison.drawdown = maxRelative(series.daily.drawdown, baseline.drawdown, 1);
}
// The data service's part server side: its responder over NATS, the DuckDB reads included.
const responder = await measureHistoryResponder({ reps: REPS, warmup: WARMUP, log });
// The whole GET over HTTP, Postgres and both services included, and numpy on the same portfolio
// and market data: the answer shown (cents, returns to 1e-8) must be numpy's, rounded.
const http = await measureHistoryHttp({ reps: REPS, warmup: WARMUP, log });
const httpBaseline = runNumpy(http.baseline_case);
const shownOff = { value: NaN, twr: NaN, drawdown: NaN };
/** Points whose shown value, TWR and drawdown are numpy's rounded as the service rounds (cents, 1e-8, half to even). */
let shownEqual = 0;
if (httpBaseline) {
  shownEqual = http.points_shown.filter(
    (p, t) => p.value === toCents(httpBaseline.value[t]!) && p.twr === toReturn(httpBaseline.twr[t]!) && p.drawdown === toReturn(httpBaseline.drawdown[t]!),
  ).length;
  const worst = (shown: number[], theirs: number[]) => shown.reduce((w, x, t) => Math.max(w, Math.abs(x - theirs[t]!)), 0);
  shownOff.value = worst(
    http.points_shown.map((p) => p.value),
    httpBaseline.value,
  );
  shownOff.twr = worst(
    http.points_shown.map((p) => p.twr),
    httpBaseline.twr,
  );
  shownOff.drawdown = worst(
    http.points_shown.map((p) => p.drawdown),
    httpBaseline.drawdown,
  );
}
const loadAfter = round(loadavg()[0]!);

const ms = (values: number[]) => round(median(values), 3);
const agree = baseline ? comparison.value <= 1e-9 && comparison.twr <= 1e-9 && comparison.drawdown <= 1e-9 : undefined;
const shownAgrees = shownOff.value <= 0.005 + 1e-9 && shownOff.twr <= 5e-9 + 1e-12 && shownOff.drawdown <= 5e-9 + 1e-12;
const checks = [
  `${ms(runs.daily) <= TARGET_MS ? 'ok' : 'FAILED'}: calculator, daily answer, median ${ms(runs.daily)} ms ≤ ${TARGET_MS} ms`,
  `${ms(responder.times_ms) <= TARGET_MS ? 'ok' : 'FAILED'}: data service over NATS (request → reply, DuckDB reads included), daily answer, median ${ms(responder.times_ms)} ms ≤ ${TARGET_MS} ms`,
  baseline
    ? `${agree ? 'ok' : 'FAILED'}: same value, TWR and drawdown as numpy within 1e-9 relative (max ${comparison.value.toExponential(2)}, ${comparison.twr.toExponential(2)}, ${comparison.drawdown.toExponential(2)})`
    : 'skipped: numpy baseline',
  `${ms(http.json_server_ms) <= TARGET_MS ? 'ok' : 'FAILED'}: the whole GET server side (Postgres, NATS, DuckDB, calculator, JSON; the access log's time), daily answer, median ${ms(http.json_server_ms)} ms ≤ ${TARGET_MS} ms`,
  httpBaseline
    ? `${shownAgrees ? 'ok' : 'FAILED'}: the GET's answer is numpy's on the same portfolio and market data, rounded: value within half a cent, TWR and drawdown within 5e-9 (max off ${round(shownOff.value, 6)}, ${shownOff.twr.toExponential(2)}, ${shownOff.drawdown.toExponential(2)}); ${shownEqual.toLocaleString('en')} of ${http.points.toLocaleString('en')} points equal to numpy's rounded the same way`
    : 'skipped: numpy baseline of the GET',
];
const history = `${DAYS.toLocaleString('en')} business days (10 years) × ${INSTRUMENTS} instruments (${USD_INSTRUMENTS} in USD, EUR base), ${VERSIONS} versions, ${request.flows.length} flows, a model of 20 weights + cash`;
const rows = [
  ['daily answer (2,520 points, model and XIRR, rounded)', runs.daily],
  ['weekly answer', runs.weekly],
  ['monthly answer', runs.monthly],
  ['daily series only (unrounded, no points)', runs.series],
  [
    `data service over NATS: request → reply through its responder, closes and rates read from DuckDB (${responder.points.toLocaleString('en')} points, ${responder.instruments} instruments of a generated 10-year reference file, ${responder.versions} versions, ${responder.flows} flows, a model)`,
    responder.times_ms,
  ],
  ['the same in process, without the bus (contract check, DuckDB reads, calculator, JSON text)', responder.in_process_ms],
  [
    `the whole GET /portfolios/{id}/history/, JSON, server side: the management service's access log, request in to answer out (${http.points.toLocaleString('en')} points; ${http.versions} versions and ${http.cash_moves} cash moves in Postgres, 20 instruments, a model)`,
    http.json_server_ms,
  ],
  [`the same GET as the client sees it, request to last byte (${http.json_bytes.toLocaleString('en')} bytes)`, http.json_ms],
  ['the same GET as Arrow, server side', http.arrow_server_ms],
  [`the same GET as Arrow as the client sees it (${http.arrow_bytes.toLocaleString('en')} bytes)`, http.arrow_ms],
  ...(httpBaseline ? [["numpy on the GET's portfolio and market data: value, TWR, drawdown", httpBaseline.times_ms] as const] : []),
] as const;
const markdown = [
  '### Portfolio history (`npm run bench:history`)',
  '',
  `The calculator of data-service/src/history (docs/adr/0058-portfolio-history.md) in process on ${history}; synthetic, seed 42; ${REPS} measured runs after ${WARMUP} warm-ups, medians. numpy ${baseline?.numpy ?? '(skipped)'}: bench/baselines/history.py, value, TWR and drawdown from the same data (written to a file), vectorised, timed inside Python after a warm-up (pandas is not installed and not added: Debian's python3-pandas would bring 95 packages, Boost, SymPy and Matplotlib's data among them, for what numpy alone computes here). ${cpus().length} cores, load ${loadBefore} before, ${loadAfter} after; measured ${new Date().toISOString().slice(0, 10)}.`,
  '',
  '| what | median ms | p90 ms |',
  '|---|---|---|',
  ...rows.map(([label, values]) => `| ${label} | ${ms(values)} | ${round([...values].sort((a, b) => a - b)[Math.ceil(0.9 * values.length) - 1]!, 3)} |`),
  ...(baseline
    ? [
        `| numpy: value, TWR, drawdown (daily, unrounded) | ${round(median(baseline.times_ms), 3)} | ${round([...baseline.times_ms].sort((a, b) => a - b)[Math.ceil(0.9 * baseline.times_ms.length) - 1]!, 3)} |`,
      ]
    : []),
  '',
  `Answer: ${answer.points.length} points, ${answerBytes.toLocaleString('en')} bytes of JSON; TWR ${answer.summary.twr}, XIRR ${answer.summary.money_weighted_return}, max drawdown ${answer.summary.max_drawdown}. Target: ≤ ${TARGET_MS} ms server side for the whole endpoint; checked for the calculator, for the data service's part over NATS, and for the whole GET from ${http.from} to ${http.to} (management and data service in their own processes, on this machine's loopback), server side as the management service's access log times it (request in to the answer written, compressed as the client accepts) and as the client sees it.`,
  '',
  ...checks.map((c) => `- ${c}`),
].join('\n');
console.log(markdown);
record(
  'history',
  {
    measured: new Date().toISOString(),
    cpus: cpus().length,
    load_before: loadBefore,
    load_after: loadAfter,
    history,
    reps: REPS,
    median_ms: {
      ...Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, ms(v)])),
      data_service_over_nats: ms(responder.times_ms),
      data_service_in_process: ms(responder.in_process_ms),
      http_json_server: ms(http.json_server_ms),
      http_json_client: ms(http.json_ms),
      http_arrow_server: ms(http.arrow_server_ms),
      http_arrow_client: ms(http.arrow_ms),
      numpy_http_case: httpBaseline ? round(median(httpBaseline.times_ms), 3) : null,
    },
    http: {
      from: http.from,
      to: http.to,
      points: http.points,
      versions: http.versions,
      cash_moves: http.cash_moves,
      json_bytes: http.json_bytes,
      arrow_bytes: http.arrow_bytes,
    },
    http_shown_against_numpy: httpBaseline ? { ...shownOff, points_equal_when_rounded: shownEqual } : null,
    data_service_over_nats: {
      from: responder.from,
      to: responder.to,
      points: responder.points,
      instruments: responder.instruments,
      versions: responder.versions,
      flows: responder.flows,
    },
    numpy: baseline ? { version: baseline.numpy, median_ms: round(median(baseline.times_ms), 3) } : null,
    max_relative_difference: baseline ? comparison : null,
    answer_bytes: answerBytes,
    target_ms: TARGET_MS,
    checks,
  },
  markdown,
);
if (checks.some((c) => c.startsWith('FAILED'))) process.exitCode = 1;
