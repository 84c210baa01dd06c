import assert from 'node:assert/strict';
import type { InstrumentFacts, OptimizerRequest, Outcome } from '../../src/optimizer/engine.ts';
import { OptimizerClosed } from '../../src/optimizer/solving.ts';
import type { OptimizerExecutor } from '../../src/workers/optimizer-pool.ts';
import { optimizerScheduler } from '../../src/workers/optimizer-scheduler.ts';
import { FACTS, optimizerRequest } from './fixtures.ts';

// The fair queue in front of the optimizer's threads, with an executor whose solves the test ends
// by hand (no threads, no clock but the given one): turns by tenant, closing.

/** An executor of `slots` whose solves end when the test calls `finish()`, oldest first; `started` lists their tenants. */
function manual(slots: number) {
  const running: { tenant: string; resolve: (o: Outcome) => void; reject: (e: unknown) => void }[] = [];
  const started: string[] = [];
  const executor: OptimizerExecutor = {
    slots,
    solve: (request: OptimizerRequest, _facts: ReadonlyMap<string, InstrumentFacts>) =>
      new Promise<Outcome>((resolve, reject) => {
        started.push(request.tenant_id);
        running.push({ tenant: request.tenant_id, resolve, reject });
      }),
    close: async () => {
      for (const r of running.splice(0)) r.reject(new OptimizerClosed());
    },
  };
  const finish = async () => {
    running.shift()!.resolve({ status: 'NOT_OPTIMIZED', is_recommended: false, orders: {} });
    await new Promise((r) => setImmediate(r));
  };
  return { executor, started, finish };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('optimizer scheduler', () => {
  it("gives the thread to the tenants in turn, whatever one tenant queued before another's", async () => {
    const { executor, started, finish } = manual(1);
    const scheduler = optimizerScheduler(executor, () => 0);
    const answers = [...['A', 'A', 'A', 'A', 'B', 'C'].map((t) => scheduler.solve(t, optimizerRequest({ tenant_id: t }), async () => FACTS))];
    await settle();
    assert.deepEqual(started, ['A']);
    for (let i = 0; i < 5; i++) await finish();
    assert.deepEqual(started, ['A', 'B', 'C', 'A', 'A', 'A']);
    assert.deepEqual(scheduler.stats(), { running: 1, waiting: 0 });
    await finish();
    assert.equal((await Promise.all(answers)).length, 6);
    assert.deepEqual(scheduler.stats(), { running: 0, waiting: 0 });
  });

  it('hands back the waiting and solving requests when closed, and takes no more', async () => {
    const { executor } = manual(1);
    const scheduler = optimizerScheduler(executor);
    const answers = Promise.allSettled([1, 2].map(() => scheduler.solve('A', optimizerRequest({ tenant_id: 'A' }), async () => FACTS)));
    await settle();
    await scheduler.close();
    for (const answer of await answers) assert.ok(answer.status === 'rejected' && answer.reason instanceof OptimizerClosed);
    await assert.rejects(
      scheduler.solve('A', optimizerRequest(), async () => FACTS),
      OptimizerClosed,
    );
  });

  it('answers with the error of reading the facts, and frees the slot for the next request', async () => {
    const { executor, started } = manual(1);
    const scheduler = optimizerScheduler(executor);
    const failing = scheduler.solve('A', optimizerRequest({ tenant_id: 'A' }), () => Promise.reject(new Error('the store is away')));
    void scheduler.solve('B', optimizerRequest({ tenant_id: 'B' }), async () => FACTS);
    await assert.rejects(failing, /the store is away/);
    await settle();
    assert.deepEqual(started, ['B']);
  });
});
