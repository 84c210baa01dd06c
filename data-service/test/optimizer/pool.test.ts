import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { loadOptimizer, type Optimizer, type OptimizerRequest } from '../../src/optimizer/engine.ts';
import { EngineFailed, OptimizerClosed } from '../../src/optimizer/solving.ts';
import { optimizerPool, type OptimizerPool } from '../../src/workers/optimizer-pool.ts';
import { BD1, EQ1, EQ2, FACTS, optimizerRequest, storeFacts } from './fixtures.ts';

// The optimizer's worker threads (docs/adr/0020-optimizer-model.md): the same outcome, byte for
// byte, as the engine on the event loop, the engine's errors as before, and closing with solves in
// flight. Over NATS: fair-consumer.test.ts.

/** Requests whose outcomes cover every status and both share kinds; one makes the solver fail. */
const CASES: { name: string; request: OptimizerRequest; facts?: ReturnType<typeof storeFacts> }[] = [
  {
    name: 'whole shares within a band',
    request: optimizerRequest({
      holdings: { $EUR: 10_000, [EQ2]: 7 },
      model_portfolio: { [EQ1]: 0.5, [EQ2]: 0.2, [BD1]: 0.25 },
      asset_class_bands: { EQUITY: [0, 0.6], FIXED_INCOME: [0.2, 1] },
      transaction_cost_bps: 10,
      cash_buffer: 0.02,
    }),
  },
  {
    name: 'fractional shares with a withdrawal',
    request: optimizerRequest({
      holdings: { [EQ1]: 33.3, [BD1]: 12.5, $EUR: 77.7 },
      model_portfolio: { [EQ1]: 0.6, [BD1]: 0.4 },
      fractional_shares: true,
      divest_amount: 900,
    }),
  },
  {
    name: 'a band that cannot be met (INFEASIBLE, the elastic copy solved too)',
    request: optimizerRequest({ holdings: { $EUR: 10_000 }, model_portfolio: { [EQ1]: 1 }, asset_class_bands: { FIXED_INCOME: [0.5, 1] } }),
  },
  { name: 'holdings already on target', request: optimizerRequest({ holdings: { [EQ1]: 100 }, model_portfolio: { [EQ1]: 1 } }) },
  {
    name: 'numbers the solver cannot take (solver error)',
    request: optimizerRequest({ holdings: { [EQ1]: 1e300, $EUR: 1e300 }, model_portfolio: { [EQ1]: 0.5, [EQ2]: 0.5 } }),
    facts: storeFacts([EQ1, 1e300, 'EQUITY'], [EQ2, 30, 'EQUITY']),
  },
];

describe('optimizer worker threads', function () {
  this.timeout(60_000);
  let inline: Optimizer;
  const pools: OptimizerPool[] = [];
  const pool = (threads: number) => {
    const made = optimizerPool(threads);
    pools.push(made);
    return made;
  };
  before(async () => {
    inline = await loadOptimizer();
  });
  after(async () => {
    await Promise.all(pools.map((p) => p.close()));
  });

  it('answers the same bytes as the engine on the event loop, on 1 and 2 threads, every status and a solver error among them', async () => {
    const expected = CASES.map((c) => JSON.stringify(inline(c.request, c.facts ?? FACTS)));
    assert.deepEqual(
      new Set(expected.map((e) => (JSON.parse(e) as { status: string }).status)),
      new Set(['SUCCESS', 'INFEASIBLE', 'NOT_OPTIMIZED', 'FAILURE']),
    );
    assert.match(expected.at(-1)!, /solver error/);
    for (const threads of [1, 2]) {
      const p = pool(threads);
      await p.ready();
      assert.equal(p.busyThreads(), 0);
      // All at once: more requests than threads wait in the pool and still get their own answers.
      const answers = await Promise.all(CASES.map((c) => p.solve(c.request, c.facts ?? FACTS)));
      assert.deepEqual(
        answers.map((a) => JSON.stringify(a)),
        expected,
        `${threads} thread(s)`,
      );
    }
  });

  it("rejects with the engine's own error when the engine throws, and the thread answers the next request", async () => {
    const broken = { ...CASES[0]!.request, model_portfolio: null as unknown as OptimizerRequest['model_portfolio'] };
    const thrown = (() => {
      try {
        inline(broken, FACTS);
      } catch (error) {
        return (error as Error).message;
      }
      assert.fail('the engine did not throw');
    })();
    const p = pool(1);
    await assert.rejects(p.solve(broken, FACTS), (error: unknown) => error instanceof EngineFailed && error.message === thrown);
    assert.equal(JSON.stringify(await p.solve(CASES[0]!.request, FACTS)), JSON.stringify(inline(CASES[0]!.request, FACTS)));
  });

  it('hands back the solves in flight and waiting when closed, and takes no more', async () => {
    const p = optimizerPool(1);
    const settled = Promise.allSettled([p.solve(CASES[0]!.request, FACTS), p.solve(CASES[1]!.request, FACTS)]);
    assert.equal(p.busyThreads(), 1, 'one solve on the thread, one waiting');
    await p.close();
    for (const outcome of await settled) assert.ok(outcome.status === 'rejected' && outcome.reason instanceof OptimizerClosed);
    await assert.rejects(p.solve(CASES[0]!.request, FACTS), OptimizerClosed);
    assert.equal(p.busyThreads(), 0);
  });

  it('runs its threads at the nice value given, and the event loop at its own', async () => {
    // A nice value no other thread of this process has: the pool's threads are the ones that show it.
    const niceOf = (task: string) => {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const atSeven = () => readdirSync('/proc/self/task').filter((task) => niceOf(task) === 7).length;
    assert.equal(atSeven(), 0);
    const p = optimizerPool(2, { nice: 7 });
    pools.push(p);
    await p.ready();
    assert.equal(atSeven(), 2, 'both threads at nice 7');
    assert.equal(niceOf(String(process.pid)), 0, 'the event loop keeps its priority');
    assert.deepEqual(await p.solve(CASES[0]!.request, FACTS), inline(CASES[0]!.request, FACTS), 'and they solve as before');
  });
});
