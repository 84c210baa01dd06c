import type { Worker } from 'node:worker_threads';
import type { InstrumentFacts, OptimizerRequest, Outcome } from '../optimizer/engine.ts';
import { EngineFailed, OptimizerClosed } from '../optimizer/solving.ts';
import { moduleWorker, siblingModule } from './module-worker.ts';

/** Solves optimizer requests off the event loop, `slots` at a time. */
export type OptimizerExecutor = {
  slots: number;
  /** The engine's outcome; rejects with EngineFailed, or with OptimizerClosed once closed. */
  solve: (request: OptimizerRequest, facts: ReadonlyMap<string, InstrumentFacts>) => Promise<Outcome>;
  close: () => Promise<void>;
};

/**
 * The pool; `ready` settles once every thread loaded the solver (rejects when one could not: the
 * service does not start), `busyThreads` counts the threads solving right now (metrics, tests).
 */
export type OptimizerPool = OptimizerExecutor & { ready: () => Promise<void>; busyThreads: () => number };

export type SolveMessage = { id: number; request: OptimizerRequest; facts: ReadonlyMap<string, InstrumentFacts> };
/** A thread's answer to a request, or whether it loaded the solver (once, first). */
export type SolveReply = { id: number; outcome: Outcome } | { id: number; error: string } | { ready: true } | { ready: false; error: string };

type Job = SolveMessage & { resolve: (outcome: Outcome) => void; reject: (error: unknown) => void };
type Thread = { worker: Worker; job?: Job; loaded: Promise<void> };

const WORKER = siblingModule('optimizer-worker', import.meta.url);

/**
 * `threads` worker threads that solve optimizer requests (docs/adr/0020-optimizer-model.md). A
 * HiGHS solve is synchronous and takes up to its time limit: on the event loop it would hold up
 * every request of the replica, the health checks included. Each thread loads the WebAssembly
 * once and solves one request at a time; requests beyond the free threads wait here in arrival
 * order (the fair order between tenants is the caller's: optimizer-scheduler.ts). Each thread runs
 * at the `nice` value given (thread-priority.ts), below the event loop. Threads start
 * with the pool and stay; one that fails fails the request it held and is replaced when needed.
 */
export function optimizerPool(threads: number, options: { timeLimitSeconds?: number; nice?: number } = {}): OptimizerPool {
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be a whole number ≥ 1, not ${threads}`);
  const workerData = { timeLimitSeconds: options.timeLimitSeconds ?? 0.5, nice: options.nice ?? 0 };
  const pool: Thread[] = [];
  const waiting: Job[] = [];
  let ids = 0;
  let closed = false;

  const spawn = (): Thread => {
    const worker = moduleWorker(WORKER, workerData);
    worker.unref();
    let loaded!: (error?: string) => void;
    const thread: Thread = {
      worker,
      loaded: new Promise<void>((resolve, reject) => {
        loaded = (error) => (error === undefined ? resolve() : reject(new Error(`the optimizer thread could not load the solver: ${error}`)));
      }),
    };
    thread.loaded.catch(() => undefined);
    worker.on('message', (reply: SolveReply) => {
      if ('ready' in reply) return loaded(reply.ready ? undefined : reply.error);
      const job = thread.job;
      thread.job = undefined;
      if (job && job.id === reply.id) {
        if ('outcome' in reply) job.resolve(reply.outcome);
        else job.reject(new EngineFailed(reply.error));
      }
      dispatch();
    });
    const fail = (error: unknown) => {
      loaded(error instanceof Error ? error.message : `exited with ${String(error)}`);
      const index = pool.indexOf(thread);
      if (index < 0) return;
      pool.splice(index, 1);
      void worker.terminate();
      const job = thread.job;
      thread.job = undefined;
      job?.reject(closed ? new OptimizerClosed() : new EngineFailed(error instanceof Error ? error.message : `optimizer worker exited with ${String(error)}`));
      dispatch();
    };
    worker.once('error', fail);
    worker.once('exit', fail);
    pool.push(thread);
    return thread;
  };

  const dispatch = () => {
    while (!closed && waiting.length > 0) {
      const thread = pool.find((t) => !t.job) ?? (pool.length < threads ? spawn() : undefined);
      if (!thread) return;
      const job = waiting.shift()!;
      thread.job = job;
      thread.worker.postMessage({ id: job.id, request: job.request, facts: job.facts } satisfies SolveMessage);
    }
  };

  // Every thread starts now: the first requests do not wait for a thread to load the solver.
  for (let i = 0; i < threads; i++) spawn();

  return {
    slots: threads,
    ready: async () => {
      await Promise.all(pool.map((t) => t.loaded));
    },
    busyThreads: () => pool.filter((t) => t.job).length,
    solve: (request, facts) =>
      new Promise<Outcome>((resolve, reject) => {
        if (closed) return reject(new OptimizerClosed());
        waiting.push({ id: ids++, request, facts, resolve, reject });
        dispatch();
      }),
    close: async () => {
      closed = true;
      for (const job of waiting.splice(0)) job.reject(new OptimizerClosed());
      for (const thread of pool) {
        thread.job?.reject(new OptimizerClosed());
        thread.job = undefined;
      }
      await Promise.all(pool.splice(0).map((t) => t.worker.terminate()));
    },
  };
}
