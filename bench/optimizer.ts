// Optimizer benchmark. (1) Solve times of the engine alone (HiGHS in WebAssembly, the answer
// checked): 20 instruments with whole shares and 200 with fractional shares, random holdings, each
// both with the model inside its bands and with a withdrawal that makes the cash constraint bind.
// (2) Optimizations through NATS with both services in processes of their own: operator requests
// for PORTFOLIOS paper portfolios, from the first request to every result stored and every
// execution booked. (3) The nightly batch over NIGHTLY robo-advised portfolios end to end: the
// batch writes the requests, the relay publishes them, the data service solves, the management
// service stores the results and the simulated broker executes the orders. (2) and (3) run twice,
// each on a platform of its own: the data service solving on its event loop, as before optimizer
// threads (bench/lib/data-service-inline.ts), then on its optimizer threads (its defaults).
// (4) One tenant's flood of optimizations beside another tenant's reads (optimizer-flood.ts).
// `npm run bench:optimizer` (BENCH_SOLVES, BENCH_PORTFOLIOS, BENCH_NIGHTLY, BENCH_FLOOD change 200,
// 1000, 10000, 300). BENCH_PARTS=flood (or solve, nats, comma-separated) runs only those parts and
// keeps the figures of the others from bench/results/optimizer.json. BENCH_FLOOD_MODES=<text>,…
// runs only the flood's modes whose name contains one of the texts (to look into one; the flood's
// figures written are then those modes' alone).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, newId, newUlid } from '@platform/shared';
import { waitFor, freePort } from '@platform/dev-stack/ports';
import { createApiKey } from '@platform/management-service/admin/provisioning';
import { runNightlyIfDue } from '@platform/management-service/jobs/optimizer-nightly';
import { loadOptimizer, type InstrumentFacts, type OptimizerRequest } from '@platform/data-service/optimizer/engine';
import { generateSample } from '@platform/data-service/sample/generate';
import { buildReferenceFile } from '@platform/data-service/store/reference-files';
import { record, round, startBenchPlatform } from './lib/harness.ts';
import { roboPaperPortfolio, threeEtfPolicy } from './lib/robo-policy.ts';
import { IDLE_FLOOD_SECONDS, LIVEZ_EVERY_MS, READ_EVERY_MS, UNIVERSE, tenantFlood, type FloodMode } from './optimizer-flood.ts';

const SOLVES = Number(process.env.BENCH_SOLVES ?? 200);
const PORTFOLIOS = Number(process.env.BENCH_PORTFOLIOS ?? 1000);
const NIGHTLY = Number(process.env.BENCH_NIGHTLY ?? 10_000);
const log = (line: string) => console.log(`[bench] ${line}`);

// ------------------------------------------------------------------ (1) the engine alone

/** A seeded generator (mulberry32): the same requests every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Case = { name: string; instruments: number; fractional: boolean; binding?: 'cash' | 'band' };

function requestOf(c: Case, rnd: () => number): { request: OptimizerRequest; facts: Map<string, InstrumentFacts> } {
  const facts = new Map<string, InstrumentFacts>();
  const weights: number[] = Array.from({ length: c.instruments }, () => 0.2 + rnd());
  const total = weights.reduce((a, b) => a + b, 0);
  const model: Record<string, number> = {};
  const holdings: Record<string, number> = {};
  const classWeight = { EQUITY: 0, FIXED_INCOME: 0 };
  let value = 0;
  for (let i = 0; i < c.instruments; i++) {
    const isin = `XS${String(i).padStart(9, '0')}0`;
    const assetClass = i % 3 === 0 ? 'FIXED_INCOME' : 'EQUITY';
    const price = Math.round((5 + rnd() * 195) * 100) / 100;
    facts.set(isin, { price, currency: 'EUR', assetClass });
    const w = Math.floor((weights[i]! / total) * 0.97 * 10_000) / 10_000;
    model[isin] = w;
    classWeight[assetClass] += w;
    if (rnd() < 0.7) {
      const shares = c.fractional ? Math.round(rnd() * 40 * 1000) / 1000 : Math.floor(rnd() * 40);
      holdings[isin] = shares;
      value += shares * price;
    }
  }
  const cash = Math.round((2000 + rnd() * 20_000) * 100) / 100;
  holdings.$EUR = cash;
  value += cash;
  const band = (w: number): [number, number] => [Math.max(0, round(w - 0.1, 4)), Math.min(1, round(w + 0.1, 4))];
  const request: OptimizerRequest = {
    request_id: newUlid(),
    tenant_id: 'bench',
    portfolio_id: newId('P'),
    optimization_id: newId('O'),
    reason: 'SCHEDULED',
    requested_at: new Date().toISOString(),
    base_currency: 'EUR',
    holdings,
    cash_buffer: 0.02,
    // A withdrawal of a quarter of the value makes the cash constraint bind; an equity band ending
    // 5 points below the model's equity weight binds the band.
    divest_amount: c.binding === 'cash' ? Math.round(value * 0.25) : 0,
    asset_class_bands: {
      EQUITY: c.binding === 'band' ? [0, round(classWeight.EQUITY - 0.05, 4)] : band(classWeight.EQUITY),
      FIXED_INCOME: c.binding === 'band' ? [0, 1] : band(classWeight.FIXED_INCOME),
    },
    model_portfolio: model,
    fractional_shares: c.fractional,
    transaction_cost_bps: 10,
    rebalancing_threshold: 0.05,
  };
  return { request, facts };
}

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function solveTimes() {
  const optimize = await loadOptimizer();
  const cases: Case[] = [
    { name: '20 instruments, whole shares', instruments: 20, fractional: false },
    { name: '20 instruments, whole shares, a withdrawal binds the cash', instruments: 20, fractional: false, binding: 'cash' },
    { name: '20 instruments, whole shares, the equity band binds', instruments: 20, fractional: false, binding: 'band' },
    { name: '200 instruments, fractional shares', instruments: 200, fractional: true },
    { name: '200 instruments, fractional shares, a withdrawal binds the cash', instruments: 200, fractional: true, binding: 'cash' },
    { name: '200 instruments, fractional shares, the equity band binds', instruments: 200, fractional: true, binding: 'band' },
  ];
  const rows = [];
  for (const c of cases) {
    const rnd = random(c.instruments * 7 + (c.binding === 'cash' ? 1 : c.binding === 'band' ? 2 : 0));
    const inputs = Array.from({ length: SOLVES }, () => requestOf(c, rnd));
    for (const { request, facts } of inputs.slice(0, 10)) optimize(request, facts); // warm-up
    const times: number[] = [];
    const statuses: Record<string, number> = {};
    for (const { request, facts } of inputs) {
      const t = performance.now();
      const outcome = optimize(request, facts);
      times.push(performance.now() - t);
      statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
    }
    times.sort((a, b) => a - b);
    const row = {
      case: c.name,
      solves: SOLVES,
      p50_ms: round(percentile(times, 0.5)),
      p99_ms: round(percentile(times, 0.99)),
      max_ms: round(times.at(-1)!),
      statuses,
    };
    log(`${row.case}: p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms, max ${row.max_ms} ms ${JSON.stringify(statuses)}`);
    rows.push(row);
  }
  return rows;
}

// ------------------------------------------------------------------ (2) and (3) both services

/** Where the data service solves: on its event loop (the baseline) or on its optimizer threads. */
const FLOWS = [
  { mode: 'event loop', entry: 'bench/lib/data-service-inline.ts' },
  { mode: 'threads (defaults)', entry: 'data-service/src/main.ts' },
] as const;

async function throughNats(entry: string) {
  const work = mkdtempSync(join(tmpdir(), 'platform-bench-optimizer-'));
  const referenceDir = join(work, 'reference');
  await buildReferenceFile(referenceDir, 'sample', (conn) => generateSample(conn, { instruments: 400, years: 1, seed: 42, endDate: '2026-11-20' }));
  const platform = await startBenchPlatform({
    BROKER_SIMULATED_LATENCY_MS: '0',
    LOG_LEVEL: 'warn',
    // Thousands of portfolios are created in a minute on one access key: the optimizer is measured, not the budget.
    RATE_LIMIT_ACCESS_KEY: '0',
  });
  const dataPort = await freePort();
  const data = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(dataPort),
      METRICS_PORT: '0',
      DATABASE_URL: platform.databaseUrl,
      NATS_URL: platform.natsUrl,
      DUCKDB_PATH: join(work, 'data.duckdb'),
      REFERENCE_DIR: referenceDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const dataUrl = `http://127.0.0.1:${dataPort}`;
    await waitFor('data service', async () => {
      if (!(await fetch(`${dataUrl}/readyz`)).ok) throw new Error('not ready');
    });
    const { db, tenantId } = platform;
    const api = await createApiKey(db, tenantId);
    const headers = { authorization: `Bearer ${platform.token}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${platform.managementUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string };
    };
    const policy = await post('/policies/', await threeEtfPolicy({ dataUrl: dataUrl, tenantId, apiKey: api.api_key, name: 'Bench' }));
    const owner = await post('/users/', {});
    const create = async (count: number, label: string) => {
      const ids: string[] = [];
      const started = performance.now();
      let made = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (made < count) {
            made++;
            const p = await post('/portfolios/', roboPaperPortfolio({ name: label, ownerId: owner.id, policyId: policy.id }));
            ids.push(p.id);
          }
        }),
      );
      log(`${count} ${label} portfolios created in ${round((performance.now() - started) / 1000)} s`);
      return ids;
    };
    const progress = async (ids: string[]) => {
      const rows = (await db('entities')
        .where({ tenant_id: tenantId, type: 'optimizations' })
        .whereIn('parent_id', ids)
        .select(
          db.raw(`count(*) filter (where doc ->> 'status' <> 'PENDING') as answered`),
          db.raw(`count(*) filter (where doc ->> 'execution_status' = 'EXECUTED') as executed`),
        )) as {
        answered: string;
        executed: string;
      }[];
      return { answered: Number(rows[0]!.answered), executed: Number(rows[0]!.executed) };
    };
    /** Seconds from `started` until every portfolio's optimization is answered, and until every one is executed. */
    const follow = async (ids: string[], started: number, limitSeconds: number) => {
      let answeredAt: number | undefined;
      for (;;) {
        const p = await progress(ids);
        if (answeredAt === undefined && p.answered >= ids.length) answeredAt = performance.now();
        if (p.executed >= ids.length) break;
        if (performance.now() - started > limitSeconds * 1000) throw new Error(`not done after ${limitSeconds} s: ${JSON.stringify(p)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      return { answered_s: round((answeredAt! - started) / 1000), executed_s: round((performance.now() - started) / 1000) };
    };

    // (2) operator requests, 16 at a time.
    const operated = await create(PORTFOLIOS, 'Operator');
    let started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < operated.length) await post(`/portfolios/${operated[next++]}/optimizations/`, {});
      }),
    );
    const requested_s = round((performance.now() - started) / 1000);
    const operator = { portfolios: PORTFOLIOS, requested_s, ...(await follow(operated, started, 600)) };
    const perSecond = round(PORTFOLIOS / operator.answered_s, 1);
    log(`${PORTFOLIOS} operator requests: all answered after ${operator.answered_s} s (${perSecond}/s), executed after ${operator.executed_s} s`);

    // (3) the nightly batch over NIGHTLY fresh portfolios (the operator's are optimized already and
    // are asked again too: their answers are NOT_OPTIMIZED or small).
    const nightly = await create(NIGHTLY, 'Nightly');
    started = performance.now();
    const run = await runNightlyIfDue({ db, logger: createLogger('bench', 'warn'), at: '00:00' });
    if (!run) throw new Error('the nightly batch did not run');
    const batch = { portfolios: run.portfolios, requested: run.requested, batch_write_s: round(run.ms / 1000), ...(await follow(nightly, started, 900)) };
    log(
      `nightly batch: ${run.requested} requests written in ${batch.batch_write_s} s; ${NIGHTLY} new ones answered after ${batch.answered_s} s, executed after ${batch.executed_s} s`,
    );
    return { operator: { ...operator, optimizations_per_s: perSecond }, nightly: batch };
  } finally {
    const exited = new Promise((r) => data.once('exit', r));
    data.kill('SIGTERM');
    await exited;
    await platform.stop();
  }
}

const PARTS = new Set((process.env.BENCH_PARTS ?? 'solve,nats,flood').split(','));
type Flow = Awaited<ReturnType<typeof throughNats>> & { mode: string };
type Figures = { solve: Awaited<ReturnType<typeof solveTimes>>; flows: Flow[]; flood?: FloodMode[] };
const previous = (): Partial<Figures> => JSON.parse(readFileSync(new URL('results/optimizer.json', import.meta.url), 'utf8')) as Partial<Figures>;
const kept = PARTS.size < 3 ? previous() : {};
const solve = PARTS.has('solve') ? await solveTimes() : kept.solve!;
const flows: Flow[] = [];
if (PARTS.has('nats')) for (const { mode, entry } of FLOWS) flows.push({ mode, ...(await throughNats(entry)) });
else flows.push(...kept.flows!);
const flood = PARTS.has('flood') ? await tenantFlood() : kept.flood!;
const figures: Figures = { solve, flows, flood };
const [loopFlow, threadFlow] = [flows[0]!, flows[1]!];
// The targets are judged on the default number of threads (the second mode).
const [inline, threads] = [flood[0]!, flood[1]!];
const [ownLoop, ownThreads] = [flood.find((m) => m.mode.startsWith('event loop, ')), flood.find((m) => m.mode.startsWith('threads (default on its core'))];
const verdict = (met: boolean) => (met ? 'yes' : 'no');
const markdown = [
  '### Optimizer (`npm run bench:optimizer`)',
  '',
  `Solve times of the engine alone, ${SOLVES} random requests per case (targets: p99 < 50 ms for 20 instruments with whole shares, < 500 ms for 200 with fractional shares):`,
  '',
  '| case | p50 | p99 | max | outcomes |',
  '|---|---|---|---|---|',
  ...solve.map(
    (r) =>
      `| ${r.case} | ${r.p50_ms} ms | ${r.p99_ms} ms | ${r.max_ms} ms | ${Object.entries(r.statuses)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')} |`,
  ),
  '',
  `Through NATS with both services (management and data service in processes of their own, paper portfolios of a 3-ETF policy, the simulated broker; each row on a platform of its own, one after the other in one run): ${loopFlow.operator.portfolios} operator requests (16 clients), then the nightly batch over ${loopFlow.nightly.portfolios} robo-advised portfolios, whose ${NIGHTLY.toLocaleString('en')} new ones are all one tenant's (target < 120 s, executed):`,
  '',
  '| solves on | operator requests: written / all answered (optimizations/s) / executed | nightly batch: requests written / new ones answered / executed |',
  '|---|---|---|',
  ...flows.map(
    (f) =>
      `| ${f.mode} | ${f.operator.requested_s} s / ${f.operator.answered_s} s (**${f.operator.optimizations_per_s}/s**) / ${f.operator.executed_s} s | ${f.nightly.batch_write_s} s / ${f.nightly.answered_s} s / **${f.nightly.executed_s} s** |`,
  ),
  '',
  `On the threads against the event loop: operator optimizations/s ${round(threadFlow.operator.optimizations_per_s / loopFlow.operator.optimizations_per_s)}×, the nightly batch's time ${round(threadFlow.nightly.executed_s / loopFlow.nightly.executed_s)}× (no lower rate: ${verdict(threadFlow.operator.optimizations_per_s >= loopFlow.operator.optimizations_per_s && threadFlow.nightly.executed_s <= loopFlow.nightly.executed_s)}).`,
  '',
  `One tenant's flood beside another tenant's reads (measured ${threads.measured_at.slice(0, 10)}, load average of the machine over the last minute of each row, the benchmark's own processes included: ${flood.map((m) => m.load_average).join(', ')}; one run, and the p99 of a few hundred reads varies from run to run): tenant A asks for ${threads.optimizations} operator optimizations (16 clients) of advisory paper portfolios of €100,000 whose policy holds ${threads.policy_instruments} instruments of the sample universe (fractional shares), while tenant B reads \`GET /data/reference/universe/?universe_name=GLOBAL&fields=ASSET_CLASS\` (${UNIVERSE.toLocaleString('en')} instruments) one request after the other, at most ${1000 / READ_EVERY_MS} a second, and a prober reads \`/livez\` (at most ${1000 / LIVEZ_EVERY_MS} a second); the data service in its own process, solving on its event loop as before optimizer threads (bench/lib/data-service-inline.ts) and on its optimizer threads (\`OPTIMIZER_THREADS\`: its default, at their default \`OPTIMIZER_THREAD_NICE\` and at the event loop's priority, and as many as the cores), and then, as pods apart would be, the data service alone on a core of its own (\`taskset\`) with the rest of the platform and the bench on the other, on its event loop and on its optimizer thread. Idle: the ${IDLE_FLOOD_SECONDS} s before A's first request; under the flood: from A's first request until all are answered; alone: ${threads.optimizations} more optimizations with no reader nor prober (on the event loop B's reads wait while A's solves run, so beside B the event loop solves with the cores to itself).`,
  '',
  '| solves on | B reads p50 / p99 idle | B reads p50 / p99 under the flood (reads answered) | `/livez` p99 idle / under the flood | optimizations/s beside B / alone |',
  '|---|---|---|---|---|',
  ...flood.map(
    (m) =>
      `| ${m.mode} | ${m.reads_idle.p50_ms} / ${m.reads_idle.p99_ms} ms | ${m.reads_flood.p50_ms} / ${m.reads_flood.p99_ms} ms (${m.reads_flood.requests}) | ${m.livez_idle.p99_ms} / ${m.livez_flood.p99_ms} ms | ${m.optimizations_per_s} (${m.optimizations} in ${m.seconds} s) / ${m.alone_optimizations_per_s} |`,
  ),
  '',
  `Targets on the default threads: B's read p99 under the flood ≤ 2× idle: ${round(threads.reads_flood.p99_ms / threads.reads_idle.p99_ms)}× (${verdict(threads.reads_flood.p99_ms <= 2 * threads.reads_idle.p99_ms)}); \`/livez\` p99 ≤ 50 ms: ${threads.livez_flood.p99_ms} ms (${verdict(threads.livez_flood.p99_ms <= 50)}); optimizations/s no lower than on the event loop: beside B ${threads.optimizations_per_s} against ${inline.optimizations_per_s} (${verdict(threads.optimizations_per_s >= inline.optimizations_per_s)}), alone ${threads.alone_optimizations_per_s} against ${inline.alone_optimizations_per_s} (${verdict(threads.alone_optimizations_per_s >= inline.alone_optimizations_per_s)}).`,
  ...(ownLoop && ownThreads
    ? [
        '',
        `With the data service on a core of its own: B's read p99 under the flood ≤ 2× idle: ${round(ownThreads.reads_flood.p99_ms / ownThreads.reads_idle.p99_ms)}× (${verdict(ownThreads.reads_flood.p99_ms <= 2 * ownThreads.reads_idle.p99_ms)}; on the event loop ${round(ownLoop.reads_flood.p99_ms / ownLoop.reads_idle.p99_ms)}×); \`/livez\` p99 ${ownThreads.livez_flood.p99_ms} ms (${verdict(ownThreads.livez_flood.p99_ms <= 50)}); optimizations/s beside B ${ownThreads.optimizations_per_s} against ${ownLoop.optimizations_per_s}, alone ${ownThreads.alone_optimizations_per_s} against ${ownLoop.alone_optimizations_per_s}.`,
      ]
    : []),
].join('\n');
record('optimizer', figures, markdown);
