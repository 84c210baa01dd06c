// Future performance benchmark: the Monte Carlo engine on 1 and 2 worker threads (the service's
// pool in the bench process) and POST /performance/future/ over HTTP (a data service started with
// SIMULATION_THREADS=1 and one with 2) against a vectorised numpy implementation of the same model
// (bench/baselines/montecarlo_numpy.py, run with python3 when numpy imports; skipped otherwise),
// for 10,000 scenarios × 30 years × 2 asset classes, 5 quantiles, sampled monthly and daily; and
// fairness: tenant B's run of 10 years daily while tenant A's burst of 50 runs holds the 2 threads,
// with the threads shared by tenant unit by unit (the service's rule) and by whole runs (the former
// rule), in this process (bench/lib/simulation-fairness.ts).
// `npm run bench:montecarlo` (BENCH_REPS / BENCH_DAILY_REPS change the 7 and 3 measured runs,
// BENCH_BURST and BENCH_FAIR_REPS the burst of 50 and B's 5 runs).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createApiKey } from '@platform/management-service/admin/provisioning';
import { generateSample } from '@platform/data-service/sample/generate';
import { futurePerformanceAnswer } from '@platform/data-service/simulation/answer';
import { simulate, type SimulationInput } from '@platform/data-service/simulation/engine';
import { stepCount } from '@platform/data-service/simulation/grid';
import { planSimulation, type FuturePerformanceRequest } from '@platform/data-service/simulation/request';
import { buildReferenceFile } from '@platform/data-service/store/reference-files';
import { simulationPool, type SimulationPool } from '@platform/data-service/workers/simulation-pool';
import { ensurePythonModule } from '@platform/dev-stack/os-packages';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { median, record, round, startBenchPlatform } from './lib/harness.ts';
import { measureFairness } from './lib/simulation-fairness.ts';

const REPS = Number(process.env.BENCH_REPS ?? 7);
const DAILY_REPS = Number(process.env.BENCH_DAILY_REPS ?? 3);
const BURST = Number(process.env.BENCH_BURST ?? 50);
const FAIR_REPS = Number(process.env.BENCH_FAIR_REPS ?? 5);
/** Tenant B's time under A's burst over its time alone, with the threads shared unit by unit. */
const FAIR_TARGET = 1.5;
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

/** Thread counts measured: the engine's pool in this process and the service's SIMULATION_THREADS. */
const THREADS = [1, 2] as const;

const inputOf = (request: FuturePerformanceRequest, seed?: number) => {
  const plan = planSimulation({ ...request, seed: seed ?? request.seed }, { maxCells: Number.MAX_SAFE_INTEGER }, () => 0);
  if (plan.source.kind !== 'expected') throw new Error('expected returns only');
  const input: SimulationInput = { ...plan.base, ...plan.source };
  return { input, grid: plan.grid };
};
const timed = async <T>(work: () => Promise<T>): Promise<[number, T]> => {
  const started = performance.now();
  const result = await work();
  return [performance.now() - started, result];
};
const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(0.9 * values.length) - 1)]!;

type NumpyResult = { times_ms: number[]; cpu_ms: number[]; numpy: string; last: number[] };
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

/**
 * Cores the machine gives this process right now: CPU time over wall time of `threads` worker
 * threads that only compute for `ms`. Measured beside the runs, it tells a limit of the engine
 * apart from a limit of the shared machine.
 */
async function coresFor(threads: number, ms = 1500): Promise<number> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const spin = `const end = Date.now() + ${ms}; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1); require('node:worker_threads').parentPort.postMessage(x);`;
  await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<void>((resolve, reject) => {
          const worker = new Worker(spin, { eval: true });
          worker.once('message', () => void worker.terminate().then(() => resolve()));
          worker.once('error', reject);
        }),
    ),
  );
  const used = process.cpuUsage(cpu);
  return round((used.user + used.system) / 1000 / (performance.now() - started), 2);
}

/** A data service in its own process with `threads` simulation threads; its URL and a stop. */
async function startService(threads: number, env: Record<string, string>): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'data-service/src/main.ts'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), SIMULATION_THREADS: String(threads), DUCKDB_PATH: join(work, `data-${threads}.duckdb`) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    `data service (${threads} threads)`,
    async () => {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
      if (!(await fetch(`${url}/readyz`)).ok) throw new Error('not ready');
    },
    60_000,
  );
  return { url, process: child };
}

async function stopService(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

const numpyReady = ensurePythonModule(PYTHON, 'numpy', 'python3-numpy', log);
if (!numpyReady) log(`${PYTHON} cannot import numpy (and it could not be installed): the numpy baseline is skipped`);

const work = mkdtempSync(join(tmpdir(), 'platform-bench-montecarlo-'));
chmodSync(work, 0o755);
const referenceDir = join(work, 'reference');
// The data service needs some reference data to start; the simulation reads none of it.
await buildReferenceFile(referenceDir, 'bench', (conn) => generateSample(conn, { instruments: 100, years: 1, seed: 1 }));
const platform = await startBenchPlatform({ LOG_LEVEL: 'warn' });
const services: ChildProcess[] = [];
const pools: SimulationPool[] = [];
const loadBefore = loadavg();
const spinBefore = { one: await coresFor(1), two: await coresFor(2) };
try {
  const env = {
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    DATABASE_URL: platform.databaseUrl,
    NATS_URL: platform.natsUrl,
    REFERENCE_DIR: referenceDir,
    REFERENCE_RELOAD_MS: '0',
    OPTIMIZER: 'false',
    LOG_LEVEL: 'warn',
  };
  const urls = new Map<number, string>();
  for (const threads of THREADS) {
    const started = await startService(threads, env);
    services.push(started.process);
    urls.set(threads, started.url);
    pools.push(simulationPool(threads));
  }
  const headers = {
    'x-tenant-id': platform.tenantId,
    'x-api-key': (await createApiKey(platform.db, platform.tenantId)).api_key,
    'content-type': 'application/json',
  };
  const post = async (threads: number, body: unknown) => {
    const [ms, text] = await timed(async () => {
      const res = await fetch(`${urls.get(threads)}/performance/future/`, { method: 'POST', headers, body: JSON.stringify(body) });
      const answer = await res.text();
      if (res.status !== 200) throw new Error(`POST /performance/future/: ${res.status} ${answer.slice(0, 500)}`);
      return answer;
    });
    return { ms, text };
  };

  const rows: Record<string, unknown>[] = [];
  const checks: string[] = [];
  for (const c of cases) {
    const { input, grid } = inputOf(c.request);
    log(`${c.name}: engine on ${THREADS.join(' and ')} threads`);
    const engineMs = new Map<number, number[]>(THREADS.map((t) => [t, []]));
    // CPU time of this process (its worker threads included) over wall time: the cores a run got.
    const coresUsed = new Map<number, number[]>(THREADS.map((t) => [t, []]));
    let last: Awaited<ReturnType<SimulationPool['start']>['done']> | undefined;
    for (const pool of pools) await pool.start(input, grid).done; // warm-up (and the threads' start)
    // Thread counts take turns run by run, so that a change of the machine's load hits both alike.
    for (let r = 0; r < c.reps; r++) {
      for (const [i, pool] of pools.entries()) {
        const cpu = process.cpuUsage();
        const [ms, out] = await timed(() => pool.start({ ...input, seed: r }, grid).done);
        const used = process.cpuUsage(cpu);
        engineMs.get(THREADS[i]!)!.push(ms);
        coresUsed.get(THREADS[i]!)!.push((used.user + used.system) / 1000 / ms);
        last = out;
      }
    }

    log(`${c.name}: over HTTP`);
    const inProcess = JSON.stringify(futurePerformanceAnswer(simulate(input, grid), input.quantiles));
    const firsts = await Promise.all(THREADS.map((t) => post(t, c.request)));
    checks.push(
      `${firsts.every((f) => f.text === inProcess) ? 'ok' : 'FAILED'}: ${c.name}: the HTTP answers on ${THREADS.join(' and ')} threads are byte-identical to each other and to simulate() in process for the same seed (${(inProcess.length / 1e6).toFixed(2)} MB)`,
    );
    const httpMs = new Map<number, number[]>(THREADS.map((t) => [t, []]));
    for (let r = 0; r < c.reps; r++) for (const t of THREADS) httpMs.get(t)!.push((await post(t, { ...c.request, seed: r })).ms);

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
    const numpyMs = numpy ? median(numpy.times_ms) : undefined;
    const oneThread = median(engineMs.get(1)!);
    for (const threads of THREADS) {
      const engine = median(engineMs.get(threads)!);
      const http = median(httpMs.get(threads)!);
      rows.push({
        case: c.name,
        label: c.label,
        threads,
        steps: stepCount(grid),
        scenarios: input.scenarios,
        reps: c.reps,
        engine_median_ms: round(engine, 1),
        engine_p90_ms: round(p90(engineMs.get(threads)!), 1),
        speedup_over_1_thread: round(oneThread / engine, 2),
        engine_cores_used: round(median(coresUsed.get(threads)!), 2),
        http_median_ms: round(http, 1),
        http_p90_ms: round(p90(httpMs.get(threads)!), 1),
        answer_bytes: inProcess.length,
        numpy_median_ms: numpyMs === undefined ? null : round(numpyMs, 1),
        numpy_cpu_over_wall: numpy ? round(median(numpy.cpu_ms) / numpyMs!, 2) : null,
        numpy_version: numpy?.numpy ?? null,
        engine_over_numpy: numpyMs === undefined ? null : round(engine / numpyMs, 2),
        http_over_numpy: numpyMs === undefined ? null : round(http / numpyMs, 2),
        target_engine_over_numpy: threads === 1 ? c.target : null,
      });
    }
  }
  // Tenant B's run beside tenant A's burst, on 2 threads.
  const fairRequest = { ...base, end_date: '2035-01-01', sample_frequency: 'D' as const };
  const fair = inputOf(fairRequest);
  const fairLabel = `10,000 scenarios × 10 years daily (${stepCount(fair.grid).toLocaleString('en')} steps) × 2 classes`;
  const fairness = await measureFairness(fair.input, fair.grid, 2, BURST, FAIR_REPS, log);
  for (const f of fairness) {
    checks.push(
      `${f.identical ? 'ok' : 'FAILED'}: fairness, threads shared by ${f.sharing}: each answer of B, alone and under A's burst, is byte-identical to simulate() in process for the same seed`,
    );
  }

  const loadAfter = loadavg();
  const spinAfter = { one: await coresFor(1), two: await coresFor(2) };

  const table = [
    '| case | threads | engine median ms (p90) | speed-up over 1 thread | cores the engine got (CPU / wall) | numpy median ms (one thread) | engine / numpy | target (1 thread) | met? | HTTP call median ms (p90) | HTTP / numpy | answer size |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const ratio = r.engine_over_numpy as number | null;
      const target = r.target_engine_over_numpy as number | null;
      const met = target === null ? '—' : ratio === null ? 'numpy skipped' : ratio <= target ? 'met' : '**not met**';
      return `| ${r.label} | ${r.threads} | ${r.engine_median_ms} (${r.engine_p90_ms}) | ${r.speedup_over_1_thread}× | ${r.engine_cores_used} | ${r.numpy_median_ms ?? '—'} | ${ratio === null ? '—' : `${ratio}×`} | ${target === null ? '—' : `≤ ${target}×`} | ${met} | ${r.http_median_ms} (${r.http_p90_ms}) | ${r.http_over_numpy === null ? '—' : `${r.http_over_numpy}×`} | ${((r.answer_bytes as number) / 1e6).toFixed(2)} MB |`;
    }),
  ];
  const numpyRow = rows.find((r) => r.numpy_version);
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' / ');
  const markdown = [
    '### Future performance Monte Carlo (`npm run bench:montecarlo`)',
    '',
    `Engine: the data service's simulation pool (data-service/src/workers/simulation-pool.ts) in the bench process on 1 and on 2 worker threads, every scenario and step, quantiles per sample date; the thread counts take turns run by run; ${REPS} measured runs each (daily: ${DAILY_REPS}) after a warm-up, seeds 0, 1, …; medians and p90. ` +
      "HTTP: POST /performance/future/ to a data service in its own process started with SIMULATION_THREADS=1, and one with 2 (`fetch`, API key, contract validation, the checks, the simulation on the service's threads and the JSON answer read to its last byte). " +
      (numpyRow
        ? `numpy ${numpyRow.numpy_version as string}: bench/baselines/montecarlo_numpy.py, the same model on the same time grid, vectorised (normals and class growth of blocks of steps at once, PCG64 + ziggurat, np.quantile per block of sample dates), timed inside Python after a warm-up run; it computes on one thread (its CPU time over wall time, below 1 when it waited for a core: ${rows
            .filter((r) => r.threads === 1)
            .map((r) => `${r.case} ${r.numpy_cpu_over_wall as number}`)
            .join(', ')}).`
        : 'numpy: skipped (python3 cannot import numpy).'),
    `Measured ${new Date().toISOString().slice(0, 10)} on this ${cpus().length}-core machine, **shared with other work while it ran** (load average over 1 / 5 / 15 minutes: ${load(loadBefore)} before, ${load(loadAfter)} after): each run got the cores in the column "cores the engine got" (CPU time of the bench process, its threads included, over wall time), and the speed-up of the second thread cannot exceed what it got. Threads that only compute got ${spinBefore.one} cores alone and ${spinBefore.two} as two before the runs, ${spinAfter.one} and ${spinAfter.two} after: what the machine had to spare. Target: engine on one thread at least as fast as numpy monthly, within 1.5× daily; on 2 threads, the same bytes as on one.`,
    '',
    ...table,
    '',
    `Fairness between tenants: tenant A sends ${BURST} simulations at once (${fairLabel}, other seeds; its queue set to ${BURST} so none is refused), tenant B one of the same size; the service's scheduler and pool (data-service/src/workers/) in the bench process on 2 threads. ` +
      `B's run alone ${FAIR_REPS} times, then ${FAIR_REPS} times one after the other under A's burst, each from a tenant with no recent usage (B1…B${FAIR_REPS}: the target is a tenant's single run), the first twice its time alone after A's runs started, the others half of it after the previous answer, from the call to the answer; then A's clients leave. ` +
      "Units: the service's rule, tenants with runs in progress share the threads unit by unit, the next unit to the tenant with the least recent usage (docs/adr/0030-monte-carlo-threads.md). Whole runs: the former rule, at most one run per thread, so that B's run waits for one of A's to end. Target: B under the burst within 1.5× its time alone, units.",
    '',
    `| threads shared by | B alone median ms (each) | B under A's burst median ms (each) | under the burst / alone | target | met? | A's runs answered meanwhile |`,
    '|---|---|---|---|---|---|---|',
    ...fairness.map(
      (f) =>
        `| ${f.sharing === 'units' ? 'units, by tenant (the service)' : 'whole runs (the former rule)'} | ${f.idle_median_ms} (${f.idle_ms.join(', ')}) | ${f.burst_median_ms} (${f.burst_ms.join(', ')}) | ${f.burst_over_idle}× | ${f.sharing === 'units' ? `≤ ${FAIR_TARGET}×` : '—'} | ${f.sharing === 'units' ? (f.burst_over_idle <= FAIR_TARGET ? 'met' : '**not met**') : '—'} | ${f.burst_runs_answered} |`,
    ),
    '',
    `Checks: ${checks.join('; ')}.`,
  ].join('\n');
  record(
    'montecarlo',
    {
      measured: new Date().toISOString(),
      cpus: cpus().length,
      load_before: loadBefore,
      load_after: loadAfter,
      spinning_threads_cores: { before: spinBefore, after: spinAfter },
      rows,
      fairness: fairness.map((f) => ({ ...f, label: fairLabel, target_burst_over_idle: f.sharing === 'units' ? FAIR_TARGET : null })),
      checks,
    },
    markdown,
  );
  if (checks.some((c) => c.startsWith('FAILED'))) process.exitCode = 1;
} finally {
  await Promise.all(pools.map((p) => p.close()));
  await Promise.all(services.map(stopService));
  await platform.stop();
  rmSync(work, { recursive: true, force: true });
}
