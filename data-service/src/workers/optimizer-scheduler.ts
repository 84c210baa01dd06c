// Optimizer requests on worker threads: a fair queue per tenant in front of the pool's slots.
import type { InstrumentFacts, OptimizerRequest, Outcome } from '../optimizer/engine.ts';
import { FairQueue } from './fair-queue.ts';
import { OptimizerClosed, TenantQueueFull, type OptimizerScheduler } from '../optimizer/solving.ts';
import type { OptimizerExecutor } from './optimizer-pool.ts';

type Facts = ReadonlyMap<string, InstrumentFacts>;

type Job = {
  request: OptimizerRequest;
  facts: Promise<Facts>;
  resolve: (answer: { outcome: Outcome; seconds: number }) => void;
  reject: (error: unknown) => void;
};

/** Weight of the newest solve in the average solve time behind the delay of a refused request. */
const SMOOTHING = 0.2;

/**
 * The fair queue of fair-queue.ts in front of the executor's slots (docs/adr/0020-optimizer-model.md):
 * a request leaves its tenant's queue when a slot is free and its tenant's turn has come, so a
 * tenant that sent hundreds of requests gets one slot per round like every other tenant. Its facts
 * are read while it waits. A tenant whose queue holds `perTenant` requests is refused with a time
 * to come back: between a quarter and three quarters of the time its queue takes to drain, its
 * waiting requests' turns of one solve per waiting tenant and slot each.
 */
export function optimizerScheduler(
  executor: OptimizerExecutor,
  perTenant: number,
  clock: { now: () => number; random: () => number } = { now: () => performance.now(), random: Math.random },
): OptimizerScheduler {
  const queue = new FairQueue<Job>(perTenant);
  // Until solves ended, a guess on the short side: a request handed back too early costs a
  // redelivery, one handed back too late leaves the threads waiting.
  let averageMs = 100;
  let closed = false;

  const start = async (tenant: string, job: Job) => {
    try {
      const facts = await job.facts;
      const started = clock.now();
      const outcome = await executor.solve(job.request, facts);
      const ms = clock.now() - started;
      averageMs += SMOOTHING * (ms - averageMs);
      job.resolve({ outcome, seconds: ms / 1000 });
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
        if (queue.waitingCount(tenant) >= perTenant) {
          const drained = (averageMs * queue.waitingCount(tenant) * Math.max(1, queue.tenantsWaiting())) / executor.slots;
          // Back between a quarter and three quarters of the time its queue takes to drain, spread:
          // they trickle back while the queue still holds some, so the threads do not wait for them.
          return reject(new TenantQueueFull(Math.ceil(drained * (0.25 + clock.random() / 2))));
        }
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
