// The fairness scenario of bench:montecarlo: tenant B's one simulation while tenant A's burst keeps
// the threads busy, under the service's scheduling (tenants share the threads unit by unit by fair
// share over recent time) and under the former one (at most one run per thread, a run waits for a
// whole run to end), side by side in one process (data-service/src/workers/simulation-scheduler.ts,
// `sharing`).
import { setTimeout as sleep } from 'node:timers/promises';
import { futurePerformanceAnswer } from '@platform/data-service/simulation/answer';
import { simulate, type SimulationInput } from '@platform/data-service/simulation/engine';
import type { Grid } from '@platform/data-service/simulation/grid';
import { simulationPool } from '@platform/data-service/workers/simulation-pool';
import { simulationScheduler, type SimulationScheduler } from '@platform/data-service/workers/simulation-scheduler';

export type Sharing = 'units' | 'runs';
export type FairnessRow = {
  sharing: Sharing;
  threads: number;
  burst: number;
  /** B's run alone, and while A's burst runs: milliseconds from its call to its answer. */
  idle_ms: number[];
  burst_ms: number[];
  idle_median_ms: number;
  burst_median_ms: number;
  burst_over_idle: number;
  /** Every answer of B, idle and under the burst, byte for byte that of simulate() in process for the seed. */
  identical: boolean;
  /** A's runs answered before the burst was called off once B's runs were measured. */
  burst_runs_answered: number;
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(5);
}

/**
 * For each way of sharing: B's run alone `reps` times (the ways take turns, so that a change of the
 * machine's load hits both alike), then under A's burst of `burst` runs of the same size (other
 * seeds, all queued at once, the tenant's queue as long as the burst so none is refused) B's run
 * `reps` times, the first twice B's idle time after A's runs started (A's burst is under way), the
 * others half of it after B's previous answer; then A's clients leave (the rest of the burst is
 * cancelled) before the next way. The pause matters under whole runs: a run asked for at the
 * instant B's previous one ends would take the thread that run frees before A's next run, which no
 * client over a network does.
 *
 * Each of B's runs under the burst is that of a tenant with no recent usage (B1, B2, …): the target
 * is a tenant's single run. One tenant sending runs back to back keeps the threads busy itself,
 * and its share converges to an equal one (docs/adr/0030-monte-carlo-threads.md).
 */
export async function measureFairness(
  input: SimulationInput,
  grid: Grid,
  threads: number,
  burst: number,
  reps: number,
  log: (line: string) => void,
): Promise<FairnessRow[]> {
  const ways: Sharing[] = ['units', 'runs'];
  const schedulers = new Map<Sharing, SimulationScheduler>(ways.map((sharing) => [sharing, simulationScheduler(simulationPool(threads), burst, { sharing })]));
  try {
    const answer = (out: ReturnType<typeof simulate>) => JSON.stringify(futurePerformanceAnswer(out, input.quantiles));
    const expected = answer(simulate(input, grid));
    const identical = new Map<Sharing, boolean>(ways.map((w) => [w, true]));
    const runB = async (sharing: Sharing, tenant = 'B'): Promise<number> => {
      const started = performance.now();
      const out = await schedulers.get(sharing)!.run(tenant, input, grid, new AbortController().signal);
      const ms = performance.now() - started;
      if (answer(out) !== expected) identical.set(sharing, false);
      return ms;
    };

    for (const sharing of ways) await runB(sharing); // warm-up (and the threads' start)
    const idle = new Map<Sharing, number[]>(ways.map((w) => [w, []]));
    for (let r = 0; r < reps; r++) for (const sharing of ways) idle.get(sharing)!.push(await runB(sharing));

    const rows: FairnessRow[] = [];
    for (const sharing of ways) {
      log(`fairness: B's run under A's burst of ${burst}, threads shared by ${sharing}`);
      const scheduler = schedulers.get(sharing)!;
      const clients = Array.from({ length: burst }, () => new AbortController());
      const runsA = clients.map((client, i) =>
        scheduler.run('A', { ...input, seed: input.seed + 1 + i }, grid, client.signal).then(
          () => 1,
          () => 0,
        ),
      );
      const pause = median(idle.get(sharing)!) / 2;
      const underBurst: number[] = [];
      for (let r = 0; r < reps; r++) {
        await sleep(r === 0 ? 4 * pause : pause);
        underBurst.push(await runB(sharing, `B${r + 1}`));
      }
      for (const client of clients) client.abort(new Error('the burst is called off'));
      const answered = (await Promise.all(runsA)).reduce((a: number, b) => a + b, 0);
      await until(() => scheduler.stats().running === 0);
      const idleMedian = median(idle.get(sharing)!);
      const burstMedian = median(underBurst);
      rows.push({
        sharing,
        threads,
        burst,
        idle_ms: idle.get(sharing)!.map((ms) => Math.round(ms)),
        burst_ms: underBurst.map((ms) => Math.round(ms)),
        idle_median_ms: Math.round(idleMedian),
        burst_median_ms: Math.round(burstMedian),
        burst_over_idle: Math.round((100 * burstMedian) / idleMedian) / 100,
        identical: identical.get(sharing)!,
        burst_runs_answered: answered,
      });
    }
    return rows;
  } finally {
    await Promise.all([...schedulers.values()].map((s) => s.close()));
  }
}
