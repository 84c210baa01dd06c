// Optimizer requests on worker threads: a fair queue per tenant in front of the pool's slots.
import type { InstrumentFacts, OptimizerRequest, Outcome } from '../optimizer/engine.ts';
import { FairQueue } from './fair-queue.ts';
import { OptimizerClosed, type OptimizerScheduler } from '../optimizer/solving.ts';
import type { OptimizerExecutor } from './optimizer-pool.ts';

type Facts = ReadonlyMap<string, InstrumentFacts>;

type Job = {
  request: OptimizerRequest;
  facts: Promise<Facts>;
  resolve: (answer: { outcome: Outcome; seconds: number }) => void;
  reject: (error: unknown) => void;
};

/**
 * The fair queue of fair-queue.ts in front of the executor's slots (docs/adr/0020-optimizer-model.md):
 * a request leaves its tenant's queue when a slot is free and its tenant's turn has come, so a
 * tenant that sent hundreds of requests gets one slot per round like every other tenant. Its facts
 * are read while it waits. How many requests a tenant has waiting is the consumer's to bound: it
 * reads no more of a tenant's requests than it may hold.
 */
export function optimizerScheduler(executor: OptimizerExecutor, now: () => number = () => performance.now()): OptimizerScheduler {
  const queue = new FairQueue<Job>(Number.MAX_SAFE_INTEGER);
  let closed = false;

  const start = async (tenant: string, job: Job) => {
    try {
      const facts = await job.facts;
      const started = now();
      const outcome = await executor.solve(job.request, facts);
      job.resolve({ outcome, seconds: (now() - started) / 1000 });
    } catch (error) {
      job.reject(error);
    } finally {
      queue.finished(tenant);
      pump();
    }
  };

  const pump = () => {
    while (!closed && queue.runningCount() < executor.slots) {
      const next = queue.take();
      if (!next) return;
      void start(next.tenant, next.item);
    }
  };

  return {
    solve: (tenant, request, facts) =>
      new Promise((resolve, reject) => {
        if (closed) return reject(new OptimizerClosed());
        const job: Job = { request, facts: Promise.resolve().then(facts), resolve, reject };
        // Read now and awaited when its turn comes; a failure is the job's answer, not an unhandled rejection.
        job.facts.catch(() => undefined);
        queue.add(tenant, job);
        pump();
      }),
    stats: () => ({ running: queue.runningCount(), waiting: queue.waitingCount() }),
    waiting: (tenant) => queue.waitingCount(tenant),
    close: async () => {
      closed = true;
      for (const job of queue.clear()) job.reject(new OptimizerClosed());
      await executor.close();
    },
  };
}
