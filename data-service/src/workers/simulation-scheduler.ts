// Simulations on worker threads: a fair queue per tenant, tenants sharing the threads unit by unit, cancelled when the client leaves.
import { TooManyWaiting } from '../domain/errors.ts';
import type { SimulationInput, SimulationOutput } from '../simulation/engine.ts';
import type { Grid } from '../simulation/grid.ts';
import { FairQueue, retryAfterSeconds } from './fair-queue.ts';
import type { SimulationExecutor, SimulationRun } from './simulation-pool.ts';

/** Simulations running on the threads and waiting for one, over all tenants. */
export type SimulationStats = { running: number; waiting: number };

/** Where a request's simulation goes: queued per tenant, run fairly, stopped when its client leaves. */
export type SimulationScheduler = {
  /**
   * The simulation's answer; rejects with TooManyWaiting when the tenant's queue is full (nothing
   * runs), and with `signal.reason` once `signal` aborts (taken out of the queue, or its run stopped).
   */
  run: (tenant: string, input: SimulationInput, grid: Grid, signal: AbortSignal) => Promise<SimulationOutput>;
  stats: () => SimulationStats;
  close: () => Promise<void>;
};

type Job = {
  input: SimulationInput;
  grid: Grid;
  resolve: (out: SimulationOutput) => void;
  reject: (error: unknown) => void;
  /** Set once the job is on a thread. */
  run?: SimulationRun;
};

/** Weight of the newest run in the average run time behind Retry-After. */
const SMOOTHING = 0.2;

/**
 * Runs in progress at most, per thread. Each holds its row buffer (up to 16 MiB) until it ends;
 * twice the threads lets as many tenants as threads arrive beside a tenant that fills them all.
 */
const RUNS_PER_SLOT = 2;

export type SchedulerOptions = {
  now?: () => number;
  /**
   * `units` (the service's): tenants share the threads unit by unit, by fair share over their
   * recent usage (docs/adr/0030-monte-carlo-threads.md).
   * `runs`: the former rule, kept for the benchmark to compare against: at most `slots` runs in
   * progress, a tenant's run waits for a whole run to end.
   */
  sharing?: 'units' | 'runs';
};

/**
 * The fair queue of fair-queue.ts in front of the executor: a job leaves the queue when its
 * tenant's turn has come and it may start. A tenant's first run in progress starts while fewer
 * than RUNS_PER_SLOT × slots runs are in progress, its further ones only while fewer than `slots`
 * are (a tenant's share follows its usage, not its runs: they add no speed beside other tenants,
 * only memory; the room kept for first runs lets a newcomer's run start at once and take the
 * threads); the executor then shares its threads among the tenants unit by unit. A job whose client left is taken out of the queue, or its run is
 * cancelled (its remaining units are dropped).
 */
export function simulationScheduler(executor: SimulationExecutor, perTenant: number, options: SchedulerOptions = {}): SimulationScheduler {
  const { now = () => performance.now(), sharing = 'units' } = options;
  const queue = new FairQueue<Job>(perTenant);
  const slots = executor.slots;
  const mayStart =
    sharing === 'runs'
      ? () => queue.runningCount() < slots
      : (_tenant: string, running: number) => queue.runningCount() < (running === 0 ? RUNS_PER_SLOT * slots : slots);
  // Until a run finished, a guess: the monthly 30-year run of bench:montecarlo (docs/benchmarks.md) takes a fraction of a second.
  let averageRunMs = 1000;
  let closed = false;

  const startRun = (tenant: string, job: Job) => {
    const started = now();
    // Whole runs: the executor shares its threads between the runs alone, as it did under that rule.
    const run = (job.run = sharing === 'runs' ? executor.start(job.input, job.grid) : executor.start(job.input, job.grid, tenant));
    run.done
      .then(
        (out) => {
          averageRunMs += SMOOTHING * (now() - started - averageRunMs);
          job.resolve(out);
        },
        (error: unknown) => job.reject(error),
      )
      .finally(() => {
        queue.finished(tenant);
        pump();
      });
  };

  const pump = () => {
    while (!closed) {
      const next = queue.take(mayStart);
      if (!next) return;
      startRun(next.tenant, next.item);
    }
  };

  return {
    run: (tenant, input, grid, signal) =>
      new Promise<SimulationOutput>((resolve, reject) => {
        if (closed) return reject(new Error('the simulation scheduler is closed'));
        if (signal.aborted) return reject(signal.reason);
        const onAbort = () => {
          if (queue.remove(tenant, job)) job.reject(signal.reason);
          else job.run?.cancel(signal.reason);
        };
        const job: Job = {
          input,
          grid,
          resolve: (out) => {
            signal.removeEventListener('abort', onAbort);
            resolve(out);
          },
          reject: (error) => {
            signal.removeEventListener('abort', onAbort);
            reject(error);
          },
        };
        if (!queue.add(tenant, job)) {
          const seconds = retryAfterSeconds(averageRunMs, queue.tenantsWaiting(), executor.slots);
          return reject(new TooManyWaiting(`This tenant already has ${perTenant} simulations waiting for a worker; retry after ${seconds} seconds.`, seconds));
        }
        signal.addEventListener('abort', onAbort, { once: true });
        pump();
      }),
    stats: () => ({ running: queue.runningCount(), waiting: queue.waitingCount() }),
    close: async () => {
      closed = true;
      for (const job of queue.clear()) job.reject(new Error('the simulation scheduler is closed'));
      await executor.close();
    },
  };
}
