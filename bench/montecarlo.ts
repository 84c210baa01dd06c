// Future performance benchmark: the Monte Carlo engine in process and POST /performance/future/
// over HTTP against a vectorised numpy implementation of the same model
// (bench/baselines/montecarlo_numpy.py, run with python3 when numpy imports; skipped otherwise),
// for 10,000 scenarios × 30 years × 2 asset classes, 5 quantiles, sampled monthly and daily.
// `npm run bench:montecarlo` (BENCH_REPS / BENCH_DAILY_REPS change the 7 and 3 measured runs).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiKey } from '../management-service/src/admin/provisioning.ts';
import { generateSample } from '../data-service/src/sample/generate.ts';
import { futurePerformanceAnswer } from '../data-service/src/simulation/answer.ts';
import { simulate, type SimulationInput } from '../data-service/src/simulation/engine.ts';
import { stepCount } from '../data-service/src/simulation/grid.ts';
import { planSimulation, type FuturePerformanceRequest } from '../data-service/src/simulation/request.ts';
import { buildReferenceFile } from '../data-service/src/store/reference-files.ts';
import { ensurePythonModule } from '@platform/test-support/os-packages';
import { freePort, waitFor } from '@platform/test-support/ports';
import { median, record, round, startBenchPlatform } from './lib/harness.ts';

const REPS = Number(process.env.BENCH_REPS ?? 7);
const DAILY_REPS = Number(process.env.BENCH_DAILY_REPS ?? 3);
const PYTHON = process.env.BENCH_PYTHON ?? 'python3';
const log = (line: string) => console.log(`[bench] ${line}`);
const root = fileURLToPath(new URL('..', import.meta.url));

const base: FuturePerformanceRequest = {
  asset_classes: { EQUITY: [0.6, 0.8], FIXED_INCOME: [0.2, 0.4] },
  start_date: '2025-01-01',
  end_date: '2055-01-01',
  currency: 'EUR',
  start_amount: 10_000,
  recurring_deposit_amount: 200,
  recurring_deposit_frequency: 'M',
  sample_frequency: 'M',
  quantiles: [0.05, 0.25, 0.5, 0.75, 0.95],
  use_expected_returns: true,
  asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.07, stdev: 0.16 }, FIXED_INCOME: { mean: 0.03, stdev: 0.05 } },
  asset_class_lt_mean_and_stdev: { EQUITY: { mean: 0.06, stdev: 0.15 }, FIXED_INCOME: { mean: 0.025, stdev: 0.04 } },
  short_to_long_term_transition_cut_off: 5,
  scenarios: 10_000,
  seed: 42,
  asset_class_correlations: { EQUITY: { FIXED_INCOME: 0.2 } },
};
const cases = [
  { name: 'monthly', label: '10,000 scenarios × 30 years monthly (360 steps) × 2 classes, 5 quantiles at 361 dates', request: base, reps: REPS, target: 1 },
  {
    name: 'daily',
    label: '10,000 scenarios × 30 years daily (10,957 steps) × 2 classes, 5 quantiles at 10,958 dates, monthly deposits',
    request: { ...base, sample_frequency: 'D' as const },
    reps: DAILY_REPS,
    target: 1.5,
  },
];

const inputOf = (request: FuturePerformanceRequest, seed?: number) => {
  const plan = planSimulation({ ...request, seed: seed ?? request.seed }, { maxCells: Number.MAX_SAFE_INTEGER }, () => 0);
  if (plan.source.kind !== 'expected') throw new Error('expected returns only');
  const input: SimulationInput = { ...plan.base, ...plan.source };
  return { input, grid: plan.grid };
};
const time = <T>(work: () => T): [number, T] => {
  const started = performance.now();
  const result = work();
  return [performance.now() - started, result];
};
const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(0.9 * values.length) - 1)]!;

type NumpyResult = { times_ms: number[]; numpy: string; last: number[] };
function runNumpy(request: FuturePerformanceRequest, reps: number): NumpyResult {
  const { input, grid } = inputOf(request);
  const spec = {
    scenarios: input.scenarios,
    weights: Array.from(input.weights),
    short_term: input.shortTerm.map((p) => [p.mean, p.stdev]),
    long_term: input.longTerm.map((p) => [p.mean, p.stdev]),
    cut_off_years: input.cutOffYears,
    correlation: Array.from(input.correlation ?? []),
    days: Array.from(grid.days),
    deposit: Array.from(grid.deposit),
    sample: Array.from(grid.sample),
    quantiles: input.quantiles,
    start_amount: input.startAmount,
    seed: 1,
    warmup: 1,
    reps,
  };
  const out = execFileSync(PYTHON, [join(root, 'bench/baselines/montecarlo_numpy.py')], { input: JSON.stringify(spec), maxBuffer: 1 << 26 });
  return JSON.parse(out.toString()) as NumpyResult;
}

const numpyReady = ensurePythonModule(PYTHON, 'numpy', 'python3-numpy', log);
if (!numpyReady) log(`${PYTHON} cannot import numpy (and it could not be installed): the numpy baseline is skipped`);

const work = mkdtempSync(join(tmpdir(), 'platform-bench-montecarlo-'));
chmodSync(work, 0o755);
const referenceDir = join(work, 'reference');
// The data service needs some reference data to start; the simulation reads none of it.
await buildReferenceFile(referenceDir, 'bench', (conn) => generateSample(conn, { instruments: 100, years: 1, seed: 1 }));
const platform = await startBenchPlatform({ LOG_LEVEL: 'warn' });
let service: ChildProcess | undefined;
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
  const headers = {
    'x-tenant-id': platform.tenantId,
    'x-api-key': (await createApiKey(platform.db, platform.tenantId)).api_key,
    'content-type': 'application/json',
  };
  const post = async (body: unknown) => {
    const started = performance.now();
    const res = await fetch(`${url}/performance/future/`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`POST /performance/future/: ${res.status} ${text.slice(0, 500)}`);
    return { ms, text };
  };

  const rows: Record<string, unknown>[] = [];
  const checks: string[] = [];
  for (const c of cases) {
    log(`${c.name}: engine in process`);
    const { input, grid } = inputOf(c.request);
    simulate(input, grid); // warm-up
    const engineMs: number[] = [];
    const answerMs: number[] = [];
    let last: ReturnType<typeof simulate> | undefined;
    for (let r = 0; r < c.reps; r++) {
      const [ms, out] = time(() => simulate({ ...input, seed: r }, grid));
      engineMs.push(ms);
      answerMs.push(time(() => JSON.stringify(futurePerformanceAnswer(out, input.quantiles)))[0]);
      last = out;
    }
    log(`${c.name}: over HTTP`);
    const inProcess = JSON.stringify(futurePerformanceAnswer(simulate(input, grid), input.quantiles));
    const first = await post(c.request);
    checks.push(
      `${first.text === inProcess ? 'ok' : 'FAILED'}: ${c.name}: the HTTP answer is byte-identical to the in-process answer for the same seed (${(first.text.length / 1e6).toFixed(2)} MB)`,
    );
    const httpMs: number[] = [];
    for (let r = 0; r < c.reps; r++) httpMs.push((await post({ ...c.request, seed: r })).ms);

    let numpy: NumpyResult | undefined;
    if (numpyReady) {
      log(`${c.name}: numpy`);
      numpy = runNumpy(c.request, c.reps);
      // Different random numbers: the final quantiles agree within Monte Carlo error (a few %).
      const nq = input.quantiles.length;
      const ours = Array.from(last!.values.subarray(last!.values.length - nq));
      const worst = Math.max(...ours.map((v, i) => Math.abs(v / numpy!.last[i]! - 1)));
      checks.push(
        `${worst < 0.05 ? 'ok' : 'FAILED'}: ${c.name}: final quantiles of the engine and numpy within ${(100 * worst).toFixed(1)} % (${ours.map((v) => Math.round(v)).join(', ')} vs ${numpy.last.map((v) => Math.round(v)).join(', ')})`,
      );
    }
    const engine = median(engineMs);
    const numpyMs = numpy ? median(numpy.times_ms) : undefined;
    rows.push({
      case: c.name,
      label: c.label,
      steps: stepCount(grid),
      scenarios: input.scenarios,
      reps: c.reps,
      engine_median_ms: round(engine, 1),
      engine_p90_ms: round(p90(engineMs), 1),
      answer_json_median_ms: round(median(answerMs), 1),
      http_median_ms: round(median(httpMs), 1),
      http_p90_ms: round(p90(httpMs), 1),
      answer_bytes: first.text.length,
      numpy_median_ms: numpyMs === undefined ? null : round(numpyMs, 1),
      numpy_version: numpy?.numpy ?? null,
      engine_over_numpy: numpyMs === undefined ? null : round(engine / numpyMs, 2),
      http_over_numpy: numpyMs === undefined ? null : round(median(httpMs) / numpyMs, 2),
      target_engine_over_numpy: c.target,
    });
  }

  const table = [
    '| case | engine median ms (p90) | numpy median ms | engine / numpy | target | met? | HTTP call median ms (p90) | HTTP / numpy | JSON answer built in process | answer size |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const ratio = r.engine_over_numpy as number | null;
      const met = ratio === null ? 'numpy skipped' : ratio <= (r.target_engine_over_numpy as number) ? 'met' : '**not met**';
      return `| ${r.label} | ${r.engine_median_ms} (${r.engine_p90_ms}) | ${r.numpy_median_ms ?? '—'} | ${ratio === null ? '—' : `${ratio}×`} | ≤ ${r.target_engine_over_numpy}× | ${met} | ${r.http_median_ms} (${r.http_p90_ms}) | ${r.http_over_numpy === null ? '—' : `${r.http_over_numpy}×`} | ${r.answer_json_median_ms} ms | ${((r.answer_bytes as number) / 1e6).toFixed(2)} MB |`;
    }),
  ];
  const numpyVersion = rows.find((r) => r.numpy_version)?.numpy_version;
  const markdown = [
    '### Future performance Monte Carlo (`npm run bench:montecarlo`)',
    '',
    `Engine: \`simulate()\` of data-service/src/simulation in the bench process (one thread), every scenario and step, quantiles per sample date; ${REPS} measured runs (daily: ${DAILY_REPS}) after a warm-up, seeds 0, 1, …; medians and p90. ` +
      'HTTP: POST /performance/future/ to the data service in its own process (`fetch`, API key, contract validation, the checks, the simulation on a worker thread of the service and the JSON answer read to its last byte). ' +
      (numpyVersion
        ? `numpy ${numpyVersion}: bench/baselines/montecarlo_numpy.py, the same model on the same time grid, vectorised (normals and class growth of blocks of steps at once, PCG64 + ziggurat, np.quantile per block of sample dates), timed inside Python after a warm-up run.`
        : 'numpy: skipped (python3 cannot import numpy).'),
    `Measured ${new Date().toISOString().slice(0, 10)} on this ${cpus().length}-core machine. Target: engine at least as fast as numpy monthly, within 1.5× daily.`,
    '',
    ...table,
    '',
    `Checks: ${checks.join('; ')}.`,
  ].join('\n');
  record('montecarlo', { measured: new Date().toISOString(), cpus: cpus().length, rows, checks }, markdown);
  if (checks.some((c) => c.startsWith('FAILED'))) process.exitCode = 1;
} finally {
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
