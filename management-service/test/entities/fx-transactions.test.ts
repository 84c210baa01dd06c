import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { account, countingBroker, executeOptimization, insertOptimization, order, settleOnce } from '../execution/fixtures.ts';

/**
 * FX transactions through the API, as a client that tries every way in (docs/adr/0022-execution-and-withdrawals.md):
 * only the service's execution books them, with their conversion; each refusal changes nothing.
 */
describe('FX transactions through the API (docs/adr/0022-execution-and-withdrawals.md)', function () {
  this.timeout(120_000);
  const US = 'US4642872000';
  let platform: TestPlatform;
  let api: Api;
  let tenantId: string;
  let portfolio: string;
  let booked: Record<string, any>;

  /** A client's FX body: 100 USD bought at 0.92 EUR each. */
  const fx = (over: Record<string, unknown> = {}) =>
    build.transaction({ type: 'FX', quantity: '100', currency: 'USD', instrument_id: '$USD', unit_price: '0.92', ...over });
  /** A conversion as complete and consistent with `fx()` as a client could make it. */
  const conversion = (over: Record<string, unknown> = {}) => ({
    from_currency: 'EUR',
    from_amount: '92.00',
    to_currency: 'USD',
    to_amount: '100',
    rate: '0.92',
    cost: '0',
    cost_currency: 'EUR',
    ...over,
  });
  const transactionsPath = () => `/portfolios/${portfolio}/transactions/`;

  /** Everything a refused write could have changed: the portfolio's transactions (every version), its holdings and the tenant's outbox. */
  async function books() {
    const db = platform.database.db;
    return {
      transactions: await db('entities')
        .select('id', 'version', 'deleted', 'doc')
        .where({ tenant_id: tenantId, type: 'transactions', parent_id: portfolio })
        .orderBy('id'),
      versions: (await db('entity_versions').count({ n: '*' }).where({ tenant_id: tenantId }).first())!.n,
      portfolio: (await api('GET', `/portfolios/${portfolio}`)).body,
      outbox: (await db('outbox').count({ n: '*' }).where({ tenant_id: tenantId }).first())!.n,
    };
  }

  /** Asserts the exact refusal and that the books are as they were. */
  async function refused(res: Awaited<ReturnType<Api>>, status: number, code: string, locs: (string | number)[][]) {
    assertProblem(res, status, code);
    assert.deepEqual(
      res.body.errors.map((e: { loc: unknown }) => e.loc),
      locs,
    );
  }

  before(async () => {
    platform = await startTestPlatform({ BROKER_SETTLEMENT: 'false' });
    const tenant = await platform.tenant(undefined, { brokerIntegration: 'SERVICE' });
    tenantId = tenant.tenantId;
    api = await machineApi(platform, tenant);
    const owner = (await api('POST', '/users/', build.user())).body.id;
    const created = await api('POST', '/portfolios/', build.roboPortfolio(owner, {}, { portfolio: { $EUR: 1000 }, brokerage_account: account }));
    assert.equal(created.status, 201, created.text);
    portfolio = created.body.id;
    // The service's own conversion: a dollar order executed, 3 × 100.5 USD bought with euros at 0.92.
    const dollarOrder = { ...order(3, 92.46, 0), currency: 'USD', expected_share_price_in_currency: 100.5, fx_rate: 0.92, expected_fx_cost: 0 };
    const optimization = await insertOptimization(platform.database.db, tenantId, portfolio, { [US]: dollarOrder } as never);
    await executeOptimization(platform.database.db, tenantId, portfolio, optimization);
    await settleOnce(platform.database.db, { broker: countingBroker().broker });
    const list = (await api('GET', `${transactionsPath()}?limit=100`)).body.results as Record<string, any>[];
    booked = list.find((t) => t.type === 'FX')!;
    assert.deepEqual(booked.conversion, conversion({ from_amount: '277.38', to_amount: '301.5' }), 'the execution booked its conversion');
  });
  after(() => platform.stop());

  it('refuses a client’s FX, without or with a conversion, consistent or not, and changes nothing', async () => {
    const before = await books();
    await refused(await api('POST', transactionsPath(), fx()), 422, 'booked_by_service', [['body', 'type']]);
    await refused(await api('POST', transactionsPath(), fx({ status: 'PLANNED', currency: 'EUR', instrument_id: '$EUR' })), 422, 'booked_by_service', [
      ['body', 'type'],
    ]);
    // conversion is read-only: refused by the contract before any rule, consistent with quantity and unit_price or not.
    await refused(await api('POST', transactionsPath(), fx({ conversion: conversion() })), 422, 'validation_failed', [['body', 'conversion']]);
    await refused(await api('POST', transactionsPath(), fx({ conversion: conversion({ to_amount: '5' }) })), 422, 'validation_failed', [
      ['body', 'conversion'],
    ]);
    await refused(await api('POST', transactionsPath(), build.transaction({ conversion: conversion() })), 422, 'validation_failed', [['body', 'conversion']]);
    const keyed = await api('POST', transactionsPath(), fx(), { 'idempotency-key': 'fx-by-a-client-1' });
    await refused(keyed, 422, 'booked_by_service', [['body', 'type']]);
    assert.doesNotMatch(keyed.text, /fx-transactions|BookedByService|checkClient/, 'no internal name');
    assert.deepEqual(await books(), before);
  });

  it('refuses a change of the service’s conversion other than its external_id, and its deletion, and changes nothing', async () => {
    const item = `${transactionsPath()}${booked.id}`;
    const before = await books();
    await refused(await api('PATCH', item, { quantity: '5' }), 422, 'booked_by_service', [['body', 'quantity']]);
    await refused(await api('PATCH', item, { type: 'CASH', status: 'CANCELLED' }), 422, 'booked_by_service', [
      ['body', 'type'],
      ['body', 'status'],
    ]);
    await refused(await api('PATCH', item, { unit_price: '0.95', external_id: 'brk-fx-1' }), 422, 'booked_by_service', [['body', 'unit_price']]);
    await refused(await api('PATCH', item, { conversion: null }), 422, 'validation_failed', [['body', 'conversion']]);
    await refused(await api('PATCH', item, { conversion: conversion() }), 422, 'validation_failed', [['body', 'conversion']]);
    await refused(await api('DELETE', item), 422, 'booked_by_service', [['path', 'transaction_id']]);
    assert.deepEqual(await books(), before);
    assert.equal((await api('GET', item)).body.version, booked.version);
  });

  it('refuses turning another transaction into FX, and changes nothing', async () => {
    const cash = await api('POST', transactionsPath(), build.transaction({ status: 'PLANNED' }));
    assert.equal(cash.status, 201, cash.text);
    const item = `${transactionsPath()}${cash.body.id}`;
    const before = await books();
    await refused(await api('PATCH', item, { type: 'FX', currency: 'USD', instrument_id: '$USD', unit_price: '0.92' }), 422, 'booked_by_service', [
      ['body', 'type'],
    ]);
    assert.deepEqual(await books(), before);
    assert.deepEqual([(await api('GET', item)).body.type, (await api('GET', item)).body.version], ['CASH', 1]);
  });

  it('lets the client set its own reference on the service’s conversion, which stays as booked', async () => {
    const item = `${transactionsPath()}${booked.id}`;
    const changed = await api('PATCH', item, { external_id: `brk-fx-${booked.id}` });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.version, booked.version + 1);
    const { external_id: _was, version: _v, version_datetime: _at, ...rest } = booked;
    const { external_id, version: _v2, version_datetime: _at2, ...after } = changed.body;
    assert.equal(external_id, `brk-fx-${booked.id}`);
    assert.deepEqual(after, rest);
  });
});
