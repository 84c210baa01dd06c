// `bench:optimizer`'s tenant flood: tenant A asks for FLOOD operator optimizations of a policy over
// about 1,095 instruments while tenant B reads GET /data/reference/universe/ and a prober reads /livez,
// with the solves on the data service's event loop (as before worker threads:
// bench/lib/data-service-inline.ts) and on its optimizer threads (OPTIMIZER_THREADS: the default, at
// two nice values, and as many as the cores); then both again with the data service alone on a core
// of its own, as pods apart would be. Each mode on a platform of its own.
import { fork, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { createApiKey, createTenant } from '@platform/management-service/admin/provisioning';
import { dataSettings } from '@platform/data-service/config';
import { generateSample } from '@platform/data-service/sample/generate';
import { buildReferenceFile } from '@platform/data-service/store/reference-files';
import { round, startBenchPlatform } from './lib/harness.ts';
import type { PacedReadings } from './lib/paced-reader.ts';

const FLOOD = Number(process.env.BENCH_FLOOD ?? 300);
/** Instruments of the sample universe (the default of a first start), and at most this many of them, priced in EUR, in the policy. */
export const UNIVERSE = 5000;
const POLICY_INSTRUMENTS = 1095;
export const IDLE_FLOOD_SECONDS = 30;
/** Tenant B's pace (10 reads a second) and the prober's (50 a second). */
export const READ_EVERY_MS = 100;
export const LIVEZ_EVERY_MS = 20;
const log = (line: string) => console.log(`[bench] ${line}`);
const OPTIMIZER_DEFAULT_THREADS = dataSettings.OPTIMIZER_THREADS.default;
const OPTIMIZER_DEFAULT_NICE = dataSettings.OPTIMIZER_THREAD_NICE.default;

type Latencies = { requests: number; errors: number; p50_ms: number; p99_ms: number; max_ms: number };
export type FloodMode = {
  mode: string;
  reads_idle: Latencies;
  reads_flood: Latencies;
  livez_idle: Latencies;
  livez_flood: Latencies;
  optimizations: number;
  policy_instruments: number;
  seconds: number;
  optimizations_per_s: number;
  /** The same number of optimizations with no reader nor prober. */
  alone_optimizations_per_s: number;
  /** When, and the machine's load average over the last minute at the end of this mode (other work shares the machine when it is well above 0). */
  measured_at: string;
  load_average: number;
};

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
function latencies(times: number[], errors: number): Latencies {
  const sorted = [...times].sort((a, b) => a - b);
  return { requests: times.length, errors, p50_ms: round(percentile(sorted, 0.5)), p99_ms: round(percentile(sorted, 0.99)), max_ms: round(sorted.at(-1) ?? 0) };
}

/**
 * B's reader or the prober, in a process of its own (lib/paced-reader.ts): at a fixed pace B asks
 * the same work of the service whether its requests stall or not. Resolves once it reads.
 */
async function reader(url: string, headers: Record<string, string>, everyMs: number) {
  const child = fork(fileURLToPath(new URL('lib/paced-reader.ts', import.meta.url)), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const started = new Promise((resolve) => child.once('message', resolve));
  child.send({ url, headers, everyMs });
  await started;
  return {
    stop: async () => {
      const readings = new Promise<PacedReadings>((resolve) => child.once('message', (m) => resolve(m as PacedReadings)));
      child.send('stop');
      const { times, errors } = await readings;
      return latencies(times, errors);
    },
  };
}

type Mode = { name: string; threads?: number; nice?: number; ownCore?: boolean };
/**
 * On the event loop (the baseline), on the optimizer threads as configured by default (their
 * default nice value, and at the event loop's priority), and on as many threads as cores (more
 * solves at once, sharing the cores with the event loop).
 */
const MODES: Mode[] = [
  { name: 'event loop' },
  { name: `threads (default: ${OPTIMIZER_DEFAULT_THREADS}, nice ${OPTIMIZER_DEFAULT_NICE})`, threads: OPTIMIZER_DEFAULT_THREADS },
  { name: `threads (default: ${OPTIMIZER_DEFAULT_THREADS}, nice 0)`, threads: OPTIMIZER_DEFAULT_THREADS, nice: 0 },
  ...(availableParallelism() > OPTIMIZER_DEFAULT_THREADS ? [{ name: `threads (${availableParallelism()}, the cores)`, threads: availableParallelism() }] : []),
  // As pods apart: the data service on a core of its own, the rest of the platform and the bench on the others.
  ...(availableParallelism() > 1
    ? [
        { name: 'event loop, the data service on a core of its own', ownCore: true },
        { name: `threads (default on its core: 1, nice ${OPTIMIZER_DEFAULT_NICE}), the data service on a core of its own`, threads: 1, ownCore: true },
      ]
    : []),
];

/** The processes under `pid` (its children, theirs, …), from /proc. */
function descendants(pid: number): number[] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
  return children.flatMap((child) => [child, ...descendants(child)]);
}

/** Sets the cores every thread of these processes may run on (taskset, util-linux). */
function pin(pids: number[], cores: string) {
  for (const pid of pids) spawnSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' });
}

/**
 * Every mode on a platform of its own (a fresh database and NATS): on a shared one, each mode would
 * find the rows of the modes before it, and the later modes would store their results into a
 * larger database.
 */
export async function tenantFlood(): Promise<FloodMode[]> {
  const work = mkdtempSync(join(tmpdir(), 'platform-bench-flood-'));
  const referenceDir = join(work, 'reference');
  await buildReferenceFile(referenceDir, 'sample', (conn) => generateSample(conn, { instruments: UNIVERSE, years: 1, seed: 42, endDate: '2026-11-20' }));
  let isins: string[] | undefined;
  const modes: FloodMode[] = [];
  const only = process.env.BENCH_FLOOD_MODES?.split(',');
  for (const mode of MODES.filter((m) => !only || only.some((name) => m.name.includes(name)))) modes.push(await floodMode(mode));
  return modes;

  async function floodMode(mode: Mode): Promise<FloodMode> {
    const platform = await startBenchPlatform({
      BROKER_SIMULATED_LATENCY_MS: '0',
      LOG_LEVEL: 'warn',
      // Hundreds of portfolios are created at once on one access key: the optimizer is measured, not the budget.
      RATE_LIMIT_ACCESS_KEY: '0',
    });
    try {
      return await measure(mode, platform);
    } finally {
      await platform.stop();
    }
  }

  async function measure(mode: Mode, platform: Awaited<ReturnType<typeof startBenchPlatform>>): Promise<FloodMode> {
    const { db, tenantId } = platform;
    await createTenant(db, { id: 'bench-b' });
    const apiA = await createApiKey(db, tenantId);
    const apiB = await createApiKey(db, 'bench-b');
    const headers = { authorization: `Bearer ${platform.token}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${platform.managementUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string };
    };

    const startData = async (mode: Mode) => {
      const port = await freePort();
      const entry = mode.threads === undefined ? 'bench/lib/data-service-inline.ts' : 'data-service/src/main.ts';
      const last = availableParallelism() - 1;
      // The rest on every core but the last, the data service on the last alone.
      if (mode.ownCore) pin([process.pid, ...descendants(process.pid)], `0-${last - 1}`);
      const [command, args] = mode.ownCore ? ['taskset', ['-c', String(last), process.execPath]] : [process.execPath, []];
      const child = spawn(command, [...args, '--import', 'tsx', entry], {
        env: {
          ...process.env,
          HOST: '127.0.0.1',
          PORT: String(port),
          METRICS_PORT: '0',
          DATABASE_URL: platform.databaseUrl,
          NATS_URL: platform.natsUrl,
          DUCKDB_PATH: join(work, `data-${MODES.indexOf(mode)}.duckdb`),
          ...(mode.threads === undefined ? {} : { OPTIMIZER_THREADS: String(mode.threads) }),
          ...(mode.nice === undefined ? {} : { OPTIMIZER_THREAD_NICE: String(mode.nice) }),
          REFERENCE_DIR: referenceDir,
          // B's reader alone sends more than the default limit of an API key.
          RATE_LIMIT_API_KEY: '0',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const url = `http://127.0.0.1:${port}`;
      await waitFor('data service', async () => {
        if (!(await fetch(`${url}/readyz`)).ok) throw new Error('not ready');
      });
      return {
        url,
        stop: async () => {
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          await exited;
          if (mode.ownCore) pin([process.pid, ...descendants(process.pid)], `0-${last}`);
        },
      };
    };

    const data = await startData(mode);
    try {
      // The policy: the first (up to) 1,095 instruments priced in EUR, equal weights, fractional shares (a
      // linear program: the same work whichever way it is solved, no time limit reached).
      isins ??= await policyInstruments(data.url, { 'x-tenant-id': tenantId, 'x-api-key': apiA.api_key });
      const weight = Math.floor((0.95 / POLICY_INSTRUMENTS) * 1e6) / 1e6;
      const policy = await post('/policies/', {
        name: 'Flood',
        config: { cash_buffer: 0.02, transaction_cost_bps: 10, fractional_shares: true, model_portfolio: Object.fromEntries(isins.map((i) => [i, weight])) },
      });
      const owner = await post('/users/', {});
      const portfolios = async (count: number) => {
        const ids: string[] = [];
        for (let i = 0; i < count; i++) {
          const p = await post('/portfolios/', {
            name: 'Flood',
            owned_by_user_id: owner.id,
            base_currency: 'EUR',
            money_type: 'PAPER_MONEY',
            portfolio: { $EUR: 100_000 },
            // Advisory: a recommendation waits for the owner, so no execution of 1,095 orders loads the platform meanwhile.
            config: { manager: 'ROBO_ADVISOR_ADVISORY', manager_version: 1, manager_settings: { policy_id: policy.id } },
          });
          ids.push(p.id);
        }
        return ids;
      };
      const answered = async (ids: string[]) => {
        const rows = (await db('entities')
          .where({ tenant_id: tenantId, type: 'optimizations' })
          .whereIn('parent_id', ids)
          .whereRaw(`doc ->> 'status' <> 'PENDING'`)
          .count({ n: '*' })) as { n: string }[];
        return Number(rows[0]!.n);
      };

      /** Seconds from A's first request of `ids` until every one is answered. */
      const flood = async (ids: string[], mode: Mode) => {
        const started = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (next < ids.length) await post(`/portfolios/${ids[next++]}/optimizations/`, {});
          }),
        );
        while ((await answered(ids)) < ids.length) {
          if (performance.now() - started > 600_000) throw new Error(`${mode.name}: not answered after 600 s`);
          await sleep(100);
        }
        return (performance.now() - started) / 1000;
      };

      const ids = await portfolios(FLOOD);
      const alone = await portfolios(FLOOD);
      const readUrl = `${data.url}/data/reference/universe/?universe_name=GLOBAL&fields=ASSET_CLASS`;
      const readHeaders = { 'x-tenant-id': 'bench-b', 'x-api-key': apiB.api_key };
      // Warm-up, then B and the prober while nothing else runs.
      for (let i = 0; i < 20; i++) await (await fetch(readUrl, { headers: readHeaders })).arrayBuffer();
      let reads = await reader(readUrl, readHeaders, READ_EVERY_MS);
      let livez = await reader(`${data.url}/livez`, {}, LIVEZ_EVERY_MS);
      await sleep(IDLE_FLOOD_SECONDS * 1000);
      const readsIdle = await reads.stop();
      const livezIdle = await livez.stop();

      reads = await reader(readUrl, readHeaders, READ_EVERY_MS);
      livez = await reader(`${data.url}/livez`, {}, LIVEZ_EVERY_MS);
      const seconds = await flood(ids, mode);
      const readsFlood = await reads.stop();
      const livezFlood = await livez.stop();
      // The same flood with nobody else asking: what the solves alone allow.
      const aloneSeconds = await flood(alone, mode);
      const row: FloodMode = {
        mode: mode.name,
        reads_idle: readsIdle,
        reads_flood: readsFlood,
        livez_idle: livezIdle,
        livez_flood: livezFlood,
        alone_optimizations_per_s: round(FLOOD / aloneSeconds),
        measured_at: new Date().toISOString(),
        load_average: round(loadavg()[0]!),
        optimizations: FLOOD,
        policy_instruments: isins.length,
        seconds: round(seconds),
        optimizations_per_s: round(FLOOD / seconds),
      };
      log(
        `${mode.name}: B's reads p50/p99 ${row.reads_idle.p50_ms}/${row.reads_idle.p99_ms} ms idle, ${row.reads_flood.p50_ms}/${row.reads_flood.p99_ms} ms under the flood (${row.reads_flood.requests} reads); /livez p99 ${row.livez_flood.p99_ms} ms; ${FLOOD} optimizations in ${row.seconds} s (${row.optimizations_per_s}/s; alone ${row.alone_optimizations_per_s}/s)`,
      );
      return row;
    } finally {
      await data.stop();
    }
  }
}

/** The first (up to) POLICY_INSTRUMENTS instruments of the sample priced in EUR. */
async function policyInstruments(url: string, headers: Record<string, string>): Promise<string[]> {
  const universe = (await (await fetch(`${url}/data/reference/universe/?universe_name=GLOBAL&fields=CURRENCY&fields=PRICE`, { headers })).json()) as {
    data: Record<string, Record<string, unknown>>;
  };
  const isins = Object.entries(universe.data)
    .filter(([, f]) => f.currency === 'EUR' && Number(f.price) > 0)
    .map(([isin]) => isin)
    .slice(0, POLICY_INSTRUMENTS);
  if (isins.length < 1000) throw new Error(`the sample has ${isins.length} instruments priced in EUR, fewer than 1,000`);
  return isins;
}
