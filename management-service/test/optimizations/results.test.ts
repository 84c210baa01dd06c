import assert from 'node:assert/strict';
import { connectNats, jetstreamManager, streams } from '@platform/shared';
import type { TestPlatform } from '@platform/test-support/platform';
import { ORDERS, eventually, optimizationTenant, startOptimizationPlatform, type OptimizationTenant, type OptimizerStandIn } from './stand-in.ts';

/**
 * The optimizer's results (docs/adr/0021-optimizations.md) against real Postgres and NATS: a stand-in reads the
 * requests from JetStream and publishes results as the data service's optimizer does.
 */
describe('optimizer results', function () {
  this.timeout(90_000);
  let platform: TestPlatform;
  let optimizer: OptimizerStandIn;
  let world: OptimizationTenant;

  before(async () => {
    ({ platform, optimizer } = await startOptimizationPlatform());
    world = await optimizationTenant(platform);
  });
  after(async () => {
    await optimizer?.stop();
    await platform?.stop();
  });

  /** A portfolio with a PENDING optimization (an operator's request) and the request the optimizer received. */
  const requested = async (settings: Record<string, unknown> = {}, over: Record<string, unknown> = {}, manager?: string) => {
    const portfolio = await world.portfolio(settings, over, manager);
    const res = await world.api('POST', `/portfolios/${portfolio}/optimizations/`, {});
    assert.equal(res.status, 202, res.text);
    const request = await optimizer.take((r) => r.portfolio_id === portfolio);
    assert.equal(request.optimization_id, res.body.id);
    return { portfolio, optimization: res.body.id as string, request };
  };
  const finished = (id: string) =>
    eventually(
      () => world.optimization(id),
      (o) => o.status !== 'PENDING',
    );
  /** The results consumer's state on the stream. */
  const consumerInfo = async () => {
    const nc = await connectNats(platform.natsUrl, 'probe');
    try {
      return await (await jetstreamManager(nc)).consumers.info(streams.platform.name, 'management-optimizer-results');
    } finally {
      await nc.drain();
    }
  };
  /** Sets the stream's de-duplication window (the stream belongs to this test's own NATS server). */
  const duplicatesAfter = async (ms: number) => {
    const nc = await connectNats(platform.natsUrl, 'probe');
    try {
      const jsm = await jetstreamManager(nc);
      const { config } = await jsm.streams.info(streams.platform.name);
      await jsm.streams.update(streams.platform.name, { ...config, duplicate_window: ms * 1_000_000 });
    } finally {
      await nc.drain();
    }
  };
  const requestRows = (optimizationId: string) => platform.database.db('optimization_requests').where({ optimization_id: optimizationId }).orderBy('attempt');

  it('stores a recommended SUCCESS once, as a new version with its orders, and emits optimizations.status-update', async () => {
    const { portfolio, optimization, request } = await requested();
    await world.events();
    await optimizer.answer(request);
    const stored = await finished(optimization);
    assert.deepEqual(
      {
        status: stored.status,
        is_recommended: stored.is_recommended,
        orders: stored.orders,
        status_detail: stored.status_detail,
        owner_choice: stored.owner_choice,
        version: stored.version,
      },
      { status: 'SUCCESS', is_recommended: true, orders: ORDERS, status_detail: null, owner_choice: null, version: 2 },
    );
    // The Client Middleware executes this REAL_MONEY portfolio's orders (CLIENT integration): nothing handed to a broker.
    assert.equal(stored.execution_status, null);
    const [row] = await requestRows(optimization);
    assert.deepEqual([row.attempt, row.result_status, row.outcome, row.reason], [1, 'SUCCESS', 'STORED', 'OPERATOR']);
    assert.ok(row.result_at instanceof Date);

    // The same result delivered again (the stream's de-duplication window set to 100 ms so that a second publish with
    // the same Nats-Msg-Id is delivered): acknowledged, stored once.
    await duplicatesAfter(100);
    await new Promise((r) => setTimeout(r, 200));
    const delivered = (await consumerInfo()).delivered.consumer_seq;
    await optimizer.answer(request, { is_recommended: false, orders: {} });
    await eventually(consumerInfo, (i) => i.delivered.consumer_seq === delivered + 1 && i.num_ack_pending === 0 && i.num_pending === 0);
    await duplicatesAfter(120_000);
    const again = await world.optimization(optimization);
    assert.deepEqual([again.version, again.orders, again.is_recommended], [2, ORDERS, true]);
    assert.equal((await requestRows(optimization)).length, 1);
    const events = await world.events();
    assert.deepEqual(
      events.map((e) => [`${e.subject}.${e.action}`, e.data]),
      [['optimizations.status-update', { id: optimization, portfolio_id: portfolio, external_id: null, is_recommended: true, value: 'SUCCESS' }]],
    );
  });

  it('stores and answers the exchange fields of an order in another currency as the optimizer sent them', async () => {
    const { optimization, request } = await requested();
    const orders = {
      ...ORDERS,
      US0378331005: {
        shares: 4,
        expected_share_price: 180,
        expected_transaction_cost: 0.72,
        currency: 'USD',
        expected_share_price_in_currency: 200,
        fx_rate: 0.9,
        expected_fx_cost: 3.6,
      },
    };
    await optimizer.answer(request, { orders });
    const stored = await finished(optimization);
    assert.deepEqual([stored.status, stored.orders], ['SUCCESS', orders]);
  });

  it('stores INFEASIBLE, FAILURE and NOT_OPTIMIZED with their detail, no orders and no event (1.0.0 emits SUCCESS only)', async () => {
    for (const status of ['INFEASIBLE', 'FAILURE', 'NOT_OPTIMIZED'] as const) {
      const { optimization, request } = await requested();
      await world.events();
      await optimizer.answer(request, { status, is_recommended: false, orders: {}, detail: `why ${status}` });
      const stored = await finished(optimization);
      assert.deepEqual([stored.status, stored.is_recommended, stored.orders, stored.status_detail], [status, false, {}, `why ${status}`]);
      assert.deepEqual(await world.events(), []);
    }
  });

  it('hands a recommended SUCCESS of a discretionary portfolio whose orders the service places to execution, in the same version', async () => {
    const { optimization, request } = await requested({}, { money_type: 'PAPER_MONEY' });
    await optimizer.answer(request);
    const stored = await finished(optimization);
    assert.equal(stored.version, 2);
    assert.equal(stored.status, 'SUCCESS');
    // PENDING when stored; the settlement job may have executed it since.
    const v2 = await world.api('GET', `/optimizations/${optimization}`);
    assert.ok(['PENDING', 'EXECUTED'].includes(v2.body.execution_status), v2.text);
    const first = await platform.database.db('entity_versions').where({ id: optimization, version: 2 }).first();
    assert.equal(first.doc.execution_status, 'PENDING');
    assert.equal((await platform.database.db('broker_instructions').where({ optimization_id: optimization, kind: 'ORDERS' })).length, 1);
    // An advisory portfolio waits for the owner's choice: nothing is executed.
    const advisory = await requested({}, { money_type: 'PAPER_MONEY' }, 'ROBO_ADVISOR_ADVISORY');
    await optimizer.answer(advisory.request);
    assert.equal((await finished(advisory.optimization)).execution_status, null);
    assert.equal((await platform.database.db('broker_instructions').where({ optimization_id: advisory.optimization })).length, 0);
  });

  it('does not store a result whose portfolio changed since the request: asks again with the current inputs (still PENDING)', async () => {
    const { portfolio, optimization, request } = await requested();
    assert.deepEqual(request.holdings, { $EUR: 1000 });
    // The holdings change while the optimizer computes (the gate lets no second request through meanwhile).
    const patched = await world.api('PATCH', `/portfolios/${portfolio}`, { portfolio: { $EUR: 1000, IE00B4L5Y983: 2 } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await world.requestsOf(portfolio)).length, 1);
    await world.events();
    await optimizer.answer(request);
    const again = await optimizer.take((r) => r.portfolio_id === portfolio);
    assert.equal(again.optimization_id, optimization);
    assert.notEqual(again.request_id, request.request_id);
    assert.deepEqual([again.holdings, again.reason], [{ $EUR: 1000, IE00B4L5Y983: 2 }, 'OPERATOR']);
    const current = await world.optimization(optimization);
    assert.deepEqual([current.status, current.version, current.orders], ['PENDING', 1, {}]);
    const rows = await requestRows(optimization);
    assert.deepEqual(
      rows.map((r) => [r.attempt, r.outcome, r.request_id]),
      [
        [1, 'STALE', request.request_id],
        [2, null, again.request_id],
      ],
    );
    assert.deepEqual(await world.events(), []);
    // The answer to the fresh request is stored.
    await optimizer.answer(again);
    assert.equal((await finished(optimization)).status, 'SUCCESS');
    // A policy change makes a result stale too (the request names the policy's version).
    const second = await requested();
    const policyPatch = await world.api('PATCH', `/policies/${world.policy}`, { config: { cash_buffer: 0.03 } });
    assert.equal(policyPatch.status, 200, policyPatch.text);
    await optimizer.answer(second.request);
    const third = await optimizer.take((r) => r.optimization_id === second.optimization);
    assert.equal(third.cash_buffer, 0.03);
  });

  it('ends an optimization NOT_OPTIMIZED when its portfolio changed and may no longer be optimized', async () => {
    const { portfolio, optimization, request } = await requested();
    assert.equal((await world.api('PATCH', `/portfolios/${portfolio}`, { archived: true })).status, 200);
    await optimizer.answer(request);
    const ended = await finished(optimization);
    assert.equal(ended.status, 'NOT_OPTIMIZED');
    assert.match(ended.status_detail, /changed while the optimizer computed .*archived/);
    assert.equal((await requestRows(optimization)).length, 1);
  });

  it('terminates a message that breaks the contract (logged, never redelivered) and goes on with the next', async () => {
    const { optimization, request } = await requested();
    await optimizer.publish('not json', 'garbage-1');
    await optimizer.publish(JSON.stringify({ request_id: '01J0000000000000000000000X', status: 'SUCCESS' }), '01J0000000000000000000000X:result');
    // A valid result under a Nats-Msg-Id other than `<request_id>:result` breaks the contract too.
    await optimizer.publish(
      JSON.stringify({ ...request, status: 'SUCCESS', is_recommended: true, orders: {}, solved_at: new Date().toISOString() }),
      'wrong-id',
    );
    await eventually(consumerInfo, (i) => i.num_ack_pending === 0 && i.num_pending === 0);
    assert.equal((await world.optimization(optimization)).status, 'PENDING');
    assert.equal((await requestRows(optimization))[0].result_at, null);
    await optimizer.answer(request);
    assert.equal((await finished(optimization)).status, 'SUCCESS');
    const consumer = await consumerInfo();
    assert.equal(consumer.num_redelivered, 0);
  });

  it('ignores a result of a request it never sent, or of another tenant', async () => {
    const other = await optimizationTenant(platform);
    const first = await requested();
    const second = await requested();
    await optimizer.answer({ ...first.request, request_id: '01J0000000000000000000000Y' });
    await optimizer.answer({ ...first.request, tenant_id: other.tenant.tenantId });
    await optimizer.answer(second.request);
    assert.equal((await finished(second.optimization)).status, 'SUCCESS');
    const untouched = await world.optimization(first.optimization);
    assert.deepEqual([untouched.status, untouched.version], ['PENDING', 1]);
    assert.equal((await requestRows(first.optimization))[0].result_at, null);
  });
});
