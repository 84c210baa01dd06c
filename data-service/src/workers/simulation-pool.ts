import type { Worker } from 'node:worker_threads';
import type { SimulationInput, SimulationOutput } from '../simulation/engine.ts';
import type { Grid } from '../simulation/grid.ts';
import { planRun, RunProgress, type RunPlan, type Unit } from '../simulation/run-plan.ts';
import { allocateRun, stopRun, type RunArrays } from '../simulation/run-state.ts';
import { moduleWorker, siblingModule } from './module-worker.ts';
import { SimulationTurns, type TurnsOptions } from './simulation-turns.ts';

/** A simulation handed to the threads: its answer, and a way to stop it. */
export type SimulationRun = {
  done: Promise<SimulationOutput>;
  /** Stops the run and rejects `done` with `reason`; nothing once `done` settled. */
  cancel: (reason: unknown) => void;
};

/**
 * Runs simulations off the event loop on `slots` threads, which the tenants of the runs in progress
 * share unit by unit. Runs started without a tenant share them as runs of one tenant.
 */
export type SimulationExecutor = {
  slots: number;
  start: (input: SimulationInput, grid: Grid, tenant?: string) => SimulationRun;
  close: () => Promise<void>;
};

/** The pool, and how many of its threads are working on a unit right now, of a cancelled run too (tests and diagnostics). */
export type SimulationPool = SimulationExecutor & { busyThreads: () => number };

/** A unit handed to a thread (`out`) or answered by it (`done`), with the tenant of its run: the order of work, for tests. */
export type UnitEvent = { event: 'out' | 'done'; tenant: string; thread: number; unit: Unit };
/** `turns`: the fair share's half-life and clock (simulation-turns.ts; defaults: 30 s, performance.now). */
export type PoolOptions = { observe?: (event: UnitEvent) => void; turns?: TurnsOptions };

/** What a thread gets: a unit of a run, with the run's input and shared arrays the first time it sees the run. */
export type UnitMessage = { run: number; unit: Unit; setup?: RunSetup } | { forget: number };
export type RunSetup = { input: SimulationInput; grid: Grid; plan: RunPlan; arrays: RunArrays };
/** A thread's answer to a unit: done, or the error it threw. */
export type UnitReply = { run: number; error?: string };

type Run = {
  id: number;
  tenant: string;
  setup: RunSetup;
  progress: RunProgress;
  resolve: (out: SimulationOutput) => void;
  reject: (error: unknown) => void;
  settled: boolean;
};
/** A worker and the units it was given, oldest first: the one it runs and at most AHEAD - 1 waiting. */
type Thread = { id: number; worker: Worker; units: { run: Run; unit: Unit }[]; knows: Set<number> };

/**
 * Units a thread holds at most: the one it runs and the next, so that it can start the next one
 * at once instead of waiting for the main thread to answer (two thread wake-ups, milliseconds on
 * a loaded machine: docs/adr/0030-monte-carlo-threads.md).
 */
const AHEAD = 2;

const WORKER = siblingModule('simulation-worker', import.meta.url);
/**
 * `threads` worker threads shared by the running simulations (docs/adr/0030-monte-carlo-threads.md).
 * A simulation takes up to seconds of CPU; on the request's event loop it would hold up every other
 * request of the replica, the health checks included.
 *
 * Each run is cut into units (simulation/run-plan.ts: steps of a range of scenario blocks over a
 * chunk of steps, or the quantiles of a range of dates) over memory the threads share. A free
 * thread takes the next unit that may start of the tenant with the least recent usage (units
 * handed out, decayed with a half-life), and among that tenant's runs of the one whose last unit
 * was handed out longest ago (simulation-turns.ts). So a lone run keeps every thread busy, a
 * tenant's share does not grow with its runs in progress, and a run of a tenant that arrives
 * beside another's burst gets the next unit handed out and every thread until its usage catches
 * up (each unit is some tens of milliseconds). A thread holds the unit it runs and the next one
 * (AHEAD), the next one only of the tenant first in turn; units go to the threads that hold the
 * fewest. The answer is the same bytes whatever the number of
 * threads and whatever runs share them.
 *
 * Cancelling a run hands out none of its units any more, marks it stopped in its shared memory
 * (a unit a thread holds ahead then does nothing) and rejects its answer at once; a unit already
 * running finishes and is dropped. Workers start on first use and stay; one that fails fails the
 * runs whose units it held and is replaced.
 */
export function simulationPool(threads: number, options: PoolOptions = {}): SimulationPool {
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be a whole number ≥ 1, not ${threads}`);
  const { observe } = options;
  const pool: Thread[] = [];
  const runs = new Map<number, Run>();
  const turns = new SimulationTurns<Run>(options.turns);
  let ids = 0;
  let threadIds = 0;
  let closed = false;

  const spawn = (): Thread => {
    const worker = moduleWorker(WORKER);
    worker.unref();
    const thread: Thread = { id: threadIds++, worker, units: [], knows: new Set() };
    worker.on('message', (reply: UnitReply) => finishedUnit(thread, reply.error));
    const fail = (error: unknown) => {
      const index = pool.indexOf(thread);
      if (index < 0) return;
      pool.splice(index, 1);
      void worker.terminate();
      const failure = error instanceof Error ? error : new Error(`simulation worker exited with ${String(error)}`);
      for (const { run } of thread.units.splice(0)) settle(run, failure);
      dispatch();
    };
    worker.once('error', fail);
    worker.once('exit', fail);
    pool.push(thread);
    return thread;
  };

  /** Ends a run: answered when `error` is undefined, rejected otherwise; threads drop its setup. */
  const settle = (run: Run, error?: unknown) => {
    if (run.settled) return;
    run.settled = true;
    runs.delete(run.id);
    turns.remove(run);
    stopRun(run.setup.arrays);
    for (const thread of pool) {
      if (thread.knows.delete(run.id)) thread.worker.postMessage({ forget: run.id } satisfies UnitMessage);
    }
    if (error !== undefined) return run.reject(error);
    const { grid, arrays } = run.setup;
    run.resolve({ dates: grid.sampleDays, deposits: grid.cumulative, values: arrays.values, paths: arrays.paths });
  };

  const finishedUnit = (thread: Thread, error?: string) => {
    // A worker answers its units in the order it got them.
    const working = thread.units.shift();
    if (working) observe?.({ event: 'done', tenant: working.run.tenant, thread: thread.id, unit: working.unit });
    if (working && !working.run.settled) {
      const { run, unit } = working;
      if (error !== undefined) settle(run, new Error(`simulation failed: ${error}`));
      else {
        run.progress.done(unit);
        if (run.progress.finished()) settle(run);
      }
    }
    dispatch();
  };

  /** Hands units to the threads that hold the fewest (starting threads up to `threads`), tenants and their runs taking turns. */
  const dispatch = () => {
    while (!closed) {
      // The thread that holds the fewest units, or a new one while every thread works and fewer than `threads` exist.
      let free: Thread | undefined;
      for (const thread of pool) if (thread.units.length < AHEAD && (!free || thread.units.length < free.units.length)) free = thread;
      const another = pool.length < threads && (!free || free.units.length > 0);
      if (!free && !another) return;
      // A unit to hold ahead of a running one goes only to the tenant first in turn (simulation-turns.ts).
      const next = turns.next((run) => run.progress.next(), !another && free!.units.length > 0);
      if (!next) return;
      const thread = another ? spawn() : free!;
      thread.units.push(next);
      observe?.({ event: 'out', tenant: next.run.tenant, thread: thread.id, unit: next.unit });
      const setup = thread.knows.has(next.run.id) ? undefined : next.run.setup;
      thread.knows.add(next.run.id);
      thread.worker.postMessage({ run: next.run.id, unit: next.unit, setup } satisfies UnitMessage);
    }
  };

  return {
    slots: threads,
    busyThreads: () => pool.filter((t) => t.units.length > 0).length,
    start: (input, grid, tenant = '') => {
      let resolve!: (out: SimulationOutput) => void;
      let reject!: (error: unknown) => void;
      const done = new Promise<SimulationOutput>((ok, fail) => {
        resolve = ok;
        reject = fail;
      });
      let run: Run;
      try {
        if (closed) throw new Error('the simulation pool is closed');
        const plan = planRun(grid, input.scenarios, input.weights.length);
        const setup = { input, grid, plan, arrays: allocateRun(input, grid, plan, 'shared') };
        run = { id: ids++, tenant, setup, progress: new RunProgress(plan, threads), resolve, reject, settled: false };
      } catch (error) {
        reject(error);
        return { done, cancel: () => undefined };
      }
      runs.set(run.id, run);
      turns.add(run, tenant);
      dispatch();
      return { done, cancel: (reason) => settle(run, reason) };
    },
    close: async () => {
      closed = true;
      for (const run of [...runs.values()]) settle(run, new Error('the simulation pool is closed'));
      await Promise.all(pool.splice(0).map((t) => t.worker.terminate()));
    },
  };
}
