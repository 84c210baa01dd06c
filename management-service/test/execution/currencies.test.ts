import assert from 'node:assert/strict';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { ISIN_A, account, countingBroker, executeOptimization, insertOptimization, instructionsOf, order, readEntity, settleOnce } from './fixtures.ts';

/**
 * Orders of an instrument priced in another currency than the portfolio's, booked through Postgres and the settlement
 * job (docs/adr/0022-execution-and-withdrawals.md): paid in their currency, the rest converted by an FX transaction.
 */
describe('execution of orders in another currency (docs/adr/0022-execution-and-withdrawals.md)', function () {
  this.timeout(120_000);
  const US = 'US4642872000';
  let platform: TestPlatform;
  let api: Api;
  let tenantId: string;
  let owner: string;

  before(async () => {
    platform = await startTestPlatform({ BROKER_SETTLEMENT: 'false' });
    const t = await platform.tenant(undefined, { brokerIntegration: 'SERVICE' });
    tenantId = t.tenantId;
    api = await machineApi(platform, t);
    owner = (await api('POST', '/users/', build.user())).body.id;
  });
  after(() => platform.stop());

  // Without a policy the optimizer is never asked (and the exchange cost is 0): the cash moves only by what these tests do.
  const robo = async (holdings: Record<string, number>) => {
    const res = await api('POST', '/portfolios/', build.roboPortfolio(owner, {}, { portfolio: holdings, brokerage_account: account }));
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  /** An order of the dollar ETF as the optimizer answers it: 3 shares at 100.5 USD, 0.92 EUR per USD. */
  const dollarOrder = { ...order(3, 92.46, 0.14), currency: 'USD', expected_share_price_in_currency: 100.5, fx_rate: 0.92, expected_fx_cost: 0 };
  const transactions = async (id: string) => (await api('GET', `/portfolios/${id}/transactions/?limit=100`)).body.results as Record<string, unknown>[];

  it('sends the dollar order in dollars, books it in USD, converts what the dollar cash lacks and moves both cash keys exactly', async () => {
    const id = await robo({ $EUR: 1000, $USD: 100 });
    const optimization = await insertOptimization(platform.database.db, tenantId, id, { [US]: dollarOrder, [ISIN_A]: order(2, 50, 0.05) } as never);
    await executeOptimization(platform.database.db, tenantId, id, optimization);
    const { broker, orders } = countingBroker();
    await settleOnce(platform.database.db, { broker });

    assert.deepEqual(orders[0]!.orders, [
      { isin: ISIN_A, shares: '2', price: '50', currency: 'EUR' },
      { isin: US, shares: '3', price: '100.5', currency: 'USD' },
    ]);
    assert.equal((await readEntity(platform.database.db, tenantId, 'optimizations', optimization)).doc.execution_status, 'EXECUTED');
    const booked = await transactions(id);
    const trade = booked.find((t) => t.instrument_id === US)!;
    assert.deepEqual([trade.type, trade.currency, trade.quantity, trade.unit_price], ['ORDER', 'USD', '3', '100.5']);
    // 301.5 USD needed, 100 held: 201.5 bought for 201.5 × 0.92 = 185.38 EUR, no exchange cost without a policy.
    const fx = booked.filter((t) => t.type === 'FX');
    assert.deepEqual(
      fx.map((t) => [t.status, t.quantity, t.currency, t.instrument_id, t.unit_price, t.optimization_id, t.conversion]),
      [
        [
          'SETTLED',
          '201.5',
          'USD',
          '$USD',
          '0.92',
          optimization,
          { from_currency: 'EUR', from_amount: '185.38', to_currency: 'USD', to_amount: '201.5', rate: '0.92', cost: '0', cost_currency: 'EUR' },
        ],
      ],
    );
    // EUR: 1000 − 2 × 50 − 0.05 − 0.14 − 185.38.
    assert.deepEqual((await api('GET', `/portfolios/${id}`)).body.portfolio, { $EUR: 714.43, $USD: 0, [US]: 3, [ISIN_A]: 2 });
  });

  it('books base-currency orders exactly as before: lines without currency fields, no FX transaction, the cash key of the base', async () => {
    const id = await robo({ $EUR: 200 });
    const optimization = await insertOptimization(platform.database.db, tenantId, id, { [ISIN_A]: order(3, 33.33, 0.1) });
    await executeOptimization(platform.database.db, tenantId, id, optimization);
    const [instruction] = await platform.database.db('broker_instructions').select('orders').where({ portfolio_id: id });
    assert.deepEqual(instruction.orders, [{ isin: ISIN_A, shares: '3', price: '33.33', cost: '0.1' }]);
    await settleOnce(platform.database.db, { broker: countingBroker().broker });
    assert.deepEqual(
      (await transactions(id)).map((t) => [t.type, t.currency, t.quantity, t.unit_price]),
      [['ORDER', 'EUR', '3', '33.33']],
    );
    assert.deepEqual((await api('GET', `/portfolios/${id}`)).body.portfolio, { $EUR: 99.91, [ISIN_A]: 3 });
  });

  it('refuses dollar orders the base cash cannot convert, with the amounts, and books nothing', async () => {
    const id = await robo({ $EUR: 100, $USD: 20 });
    const optimization = await insertOptimization(platform.database.db, tenantId, id, { [US]: dollarOrder } as never);
    await executeOptimization(platform.database.db, tenantId, id, optimization);
    const before = { portfolio: (await api('GET', `/portfolios/${id}`)).body, transactions: await transactions(id) };
    const { broker, orders } = countingBroker();
    await settleOnce(platform.database.db, { broker });

    assert.equal(orders.length, 0, 'the orders never reached the broker');
    const refused = await readEntity(platform.database.db, tenantId, 'optimizations', optimization);
    assert.equal(refused.doc.execution_status, 'REFUSED');
    // The hold counts every dollar converted: 301.5 × 0.92 = 277.38 and the 0.14 transaction cost.
    assert.equal(
      refused.doc.execution_detail,
      'the orders need 277.52 EUR (277.38 EUR of it converted into other currencies, with the cost) and 100 EUR of the cash is available',
    );
    assert.deepEqual({ portfolio: (await api('GET', `/portfolios/${id}`)).body, transactions: await transactions(id) }, before);
    assert.equal((await instructionsOf(platform.database.db, id)).length, 1);
  });
});
