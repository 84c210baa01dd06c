import assert from 'node:assert/strict';
import type { TestPlatform } from '@platform/test-support/platform';
import { eventually, optimizationTenant, startOptimizationPlatform, type OptimizationTenant, type OptimizerStandIn } from './stand-in.ts';

/** No optimization stays PENDING for ever (docs/adr/0021-optimizations.md), with short settings. */
describe('optimizer time-outs', function () {
  this.timeout(90_000);
  const TIMEOUT_MS = 1000;
  let platform: TestPlatform;
  let optimizer: OptimizerStandIn;
  let world: OptimizationTenant;

  before(async () => {
    ({ platform, optimizer } = await startOptimizationPlatform({ OPTIMIZER_RESULT_TIMEOUT_MS: String(TIMEOUT_MS), OPTIMIZER_MAX_ATTEMPTS: '3' }));
    world = await optimizationTenant(platform);
  });
  after(async () => {
    await optimizer?.stop();
    await platform?.stop();
  });

  const request = async (portfolio: string) => {
    const res = await world.api('POST', `/portfolios/${portfolio}/optimizations/`, {});
    assert.equal(res.status, 202, res.text);
    return res.body.id as string;
  };
  const requestRows = (optimizationId: string) => platform.database.db('optimization_requests').where({ optimization_id: optimizationId }).orderBy('attempt');

  it('sends an unanswered request again as a new attempt with fresh inputs, then ends FAILURE after the limit; a late result changes nothing', async () => {
    const portfolio = await world.portfolio();
    const optimization = await request(portfolio);
    const first = await optimizer.take((r) => r.optimization_id === optimization);
    const started = Date.now();
    // The holdings change meanwhile (the PATCH requests nothing: its optimization is PENDING).
    assert.equal((await world.api('PATCH', `/portfolios/${portfolio}`, { portfolio: { $EUR: 1000, IE00B4L5Y983: 1 } })).status, 200);
    const second = await optimizer.take((r) => r.optimization_id === optimization);
    assert.ok(Date.now() - started >= TIMEOUT_MS - 100, 'not before the time-out');
    assert.deepEqual([first.holdings, second.holdings], [{ $EUR: 1000 }, { $EUR: 1000, IE00B4L5Y983: 1 }]);
    const third = await optimizer.take((r) => r.optimization_id === optimization);
    assert.equal(new Set([first.request_id, second.request_id, third.request_id]).size, 3);
    assert.deepEqual(
      [first, second, third].map((r) => [r.reason, r.portfolio_id]),
      [
        ['OPERATOR', portfolio],
        ['OPERATOR', portfolio],
        ['OPERATOR', portfolio],
      ],
    );
    assert.equal((await world.optimization(optimization)).status, 'PENDING');
    await world.events();
    const failed = await eventually(
      () => world.optimization(optimization),
      (o) => o.status !== 'PENDING',
    );
    assert.deepEqual([failed.status, failed.is_recommended, failed.orders, failed.version], ['FAILURE', false, {}, 2]);
    assert.equal(failed.status_detail, `The optimizer did not answer: 3 requests went unanswered for ${TIMEOUT_MS} ms each.`);
    const rows = await requestRows(optimization);
    assert.deepEqual(
      rows.map((r) => [r.attempt, r.request_id, r.timed_out_at instanceof Date, r.result_at]),
      [
        [1, first.request_id, true, null],
        [2, second.request_id, true, null],
        [3, third.request_id, true, null],
      ],
    );
    // No fourth attempt, no event (1.0.0 emits SUCCESS only).
    await new Promise((r) => setTimeout(r, TIMEOUT_MS * 1.5));
    assert.equal((await world.requestsOf(portfolio)).length, 3);
    assert.deepEqual(await world.events(), []);

    // The optimizer's late answer is recorded and changes nothing.
    await optimizer.answer(first);
    const late = await eventually(
      () => platform.database.db('optimization_requests').where({ request_id: first.request_id }).first(),
      (r) => r.result_at !== null,
    );
    assert.deepEqual([late.outcome, late.result_status], ['LATE', 'SUCCESS']);
    const after = await world.optimization(optimization);
    assert.deepEqual([after.status, after.version, after.orders], ['FAILURE', 2, {}]);
    assert.deepEqual(await world.events(), []);

    // FAILURE reopens the gate.
    const next = await request(portfolio);
    assert.notEqual(next, optimization);
    await optimizer.answer(await optimizer.take((r) => r.optimization_id === next));
    await eventually(
      () => world.optimization(next),
      (o) => o.status === 'SUCCESS',
    );
  });

  it('takes the late answer of a timed-out attempt while the optimization is still PENDING; the newer attempt is then late', async () => {
    const portfolio = await world.portfolio();
    const optimization = await request(portfolio);
    const first = await optimizer.take((r) => r.optimization_id === optimization);
    const second = await optimizer.take((r) => r.optimization_id === optimization);
    await optimizer.answer(first);
    const stored = await eventually(
      () => world.optimization(optimization),
      (o) => o.status !== 'PENDING',
    );
    assert.deepEqual([stored.status, stored.version], ['SUCCESS', 2]);
    await optimizer.answer(second);
    const rows = await eventually(
      () => requestRows(optimization),
      (r) => r[1]?.result_at !== null,
    );
    assert.deepEqual(
      rows.slice(0, 2).map((r) => [r.attempt, r.outcome]),
      [
        [1, 'STORED'],
        [2, 'LATE'],
      ],
    );
    assert.equal((await world.optimization(optimization)).version, 2);
  });
});
