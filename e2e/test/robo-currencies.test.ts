import assert from 'node:assert/strict';
import { parseDecimal, sum, toText, type Money } from '@platform/shared';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { dataClient, machineClient } from '../src/clients.ts';
import { dollarEtfModel, type DollarModel } from '../src/sample-model.ts';

// A EUR robo portfolio whose model holds dollar ETFs, across both services: its funding, the optimizer
// pricing the dollar ETFs at the reference data's EUR/USD rate, the simulated broker filling them in
// dollars, and the conversion booked as an FX transaction of its own
// (docs/adr/0022-execution-and-withdrawals.md, docs/adr/0020-optimizer-model.md).

type Client = ReturnType<typeof machineClient>;
type Order = {
  shares: number;
  expected_share_price: number;
  expected_transaction_cost: number;
  currency?: string;
  expected_share_price_in_currency?: number;
  fx_rate?: number;
  expected_fx_cost?: number;
};
type Optimization = { id: string; status: string; status_detail?: string | null; execution_status: string | null; orders: Record<string, Order> };
type Conversion = { from_currency: string; from_amount: string; to_currency: string; to_amount: string; rate: string; cost: string; cost_currency: string };

const FX_COST_BPS = 10;
const DAY_MS = 86_400_000;
const d = (value: number | string) => parseDecimal(String(value));
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The newest EUR/USD rate of the reference data on or before `asOf` (units of USD per EUR) and its date. */
async function eurUsd(platform: TestPlatform, asOf: number): Promise<{ rate: number; date: string }> {
  const tenant = await platform.tenant();
  const res = await dataClient(platform.dataUrl, tenant.tenantId, tenant.apiKey).GET('/data/fx-rates/{base}/{quote}', {
    params: { path: { base: 'EUR', quote: 'USD' }, query: { from: day(asOf - 60 * DAY_MS), to: day(asOf) } },
  });
  assert.equal(res.response.status, 200);
  const rates = (res.data as { data: { rates: { date: string; rate: number }[] } }).data.rates;
  assert.ok(rates.length > 0, 'the sample has EUR/USD rates');
  return rates.at(-1)!;
}

/** Days from the rate's date to today's (UTC), the age the optimizer sees on a request made now. */
const ageInDays = (date: string, now: number) => Math.round((Date.parse(day(now)) - Date.parse(date)) / DAY_MS);

/** A EUR paper portfolio on a policy whose equity is in dollar ETFs (the demo's policy in USD). */
async function dollarPortfolio(platform: TestPlatform, model: DollarModel): Promise<{ machine: Client; portfolioId: string }> {
  const tenant = await platform.tenant();
  const machine = machineClient(platform.managementUrl, tenant);
  const user = await machine.POST('/users/', { body: { first_name: 'Ada', last_name: 'Lovelace', external_id: 'crm-usd' } });
  const equity = Object.fromEntries(model.usdEquity.map((isin) => [isin, 0.59 / model.usdEquity.length]));
  const policy = await machine.POST('/policies/', {
    body: {
      name: 'Balanced USD',
      config: {
        minimum_funding_amount: '1000',
        cash_buffer: 0.02,
        rebalancing_threshold: 0.05,
        transaction_cost_bps: 10,
        fx_cost_bps: FX_COST_BPS,
        model_portfolio: { ...equity, [model.eurBonds[0]!]: 0.39 },
        asset_class_bands: { EQUITY: [0.49, 0.69], FIXED_INCOME: [0.29, 0.49] },
      },
    },
  });
  assert.equal(policy.response.status, 201);
  const portfolio = await machine.POST('/portfolios/', {
    body: {
      name: 'Robo in dollars',
      owned_by_user_id: user.data!.id,
      base_currency: 'EUR',
      money_type: 'PAPER_MONEY',
      config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: { policy_id: policy.data!.id } },
    },
  });
  assert.equal(portfolio.response.status, 201);
  return { machine, portfolioId: portfolio.data!.id };
}

/** Paper money is funded by setting its cash (a deposit event is for real money): the optimization follows. */
async function fund(machine: Client, portfolioId: string, amount: number): Promise<void> {
  const res = await machine.PATCH('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: portfolioId } }, body: { portfolio: { $EUR: amount } } });
  assert.equal(res.response.status, 200);
}

const latest = (machine: Client, portfolioId: string) =>
  eventually('the optimizer to answer', async () => {
    const res = await machine.GET('/portfolios/{portfolio_id}/optimizations/latest/', { params: { path: { portfolio_id: portfolioId } } });
    return res.response.status === 200 ? (res.data as unknown as Optimization) : undefined;
  });

const holdingsOf = async (machine: Client, portfolioId: string) => {
  const res = await machine.GET('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: portfolioId } } });
  assert.equal(res.response.status, 200);
  return res.data!.portfolio as Record<string, number>;
};

const transactionsOf = async (machine: Client, portfolioId: string, type: string) => {
  const res = await machine.GET('/portfolios/{portfolio_id}/transactions/', {
    params: { path: { portfolio_id: portfolioId }, query: { query: `type eq '${type}'`, limit: 100 } },
  });
  assert.equal(res.response.status, 200);
  return res.data!.results as unknown as {
    type: string;
    status: string;
    quantity: string;
    currency: string;
    instrument_id: string;
    unit_price: string | null;
    optimization_id: string | null;
    conversion?: Conversion;
  }[];
};

describe('a EUR robo portfolio holding dollar ETFs, optimized and executed on paper money', function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let model: DollarModel;
  let rate: { rate: number; date: string };

  before(async () => {
    // The sample's rates end on its last business day: the rate's age on the request's day is read, not assumed.
    platform = await startTestPlatform({ FX_MAX_AGE_DAYS: '366' }, { ownNats: true });
    const tenant = await platform.tenant();
    model = await dollarEtfModel(platform.dataUrl, tenant);
    rate = await eurUsd(platform, Date.now());
    assert.ok(ageInDays(rate.date, Date.now()) <= 366, 'the sample’s last rate is within a year');
  });
  after(() => platform?.stop());

  it('buys the dollar ETFs in dollars, converts what they need at the cross rate and books every cent', async () => {
    const { machine, portfolioId } = await dollarPortfolio(platform, model);
    const before = await holdingsOf(machine, portfolioId);
    assert.deepEqual(before, {}, 'nothing is held before the funding');
    await fund(machine, portfolioId, 10000);
    const o = await latest(machine, portfolioId);
    assert.equal(o.status, 'SUCCESS', `the optimization succeeds: ${o.status_detail ?? ''}`);
    const executed = await eventually('the execution', async () => {
      const res = await machine.GET('/optimizations/{optimization_id}', { params: { path: { optimization_id: o.id } } });
      const now = res.data as unknown as Optimization;
      return now.execution_status === 'EXECUTED' || now.execution_status === 'REFUSED' ? now : undefined;
    });
    assert.equal(executed.execution_status, 'EXECUTED', `executed: ${JSON.stringify(executed)}`);

    // The orders: dollar ETFs carry USD, their dollar price and the cross rate, 1 / (USD per EUR).
    const fxRate = Number(toText(d(1).div(d(rate.rate))));
    const dollarOrders = Object.entries(o.orders).filter(([isin]) => model.usdEquity.includes(isin));
    assert.ok(dollarOrders.length > 0 && dollarOrders.every(([, order]) => order.shares > 0), 'dollar ETFs are bought');
    for (const [isin, order] of dollarOrders) {
      assert.equal(order.currency, 'USD', isin);
      assert.equal(order.fx_rate, fxRate, `${isin} is priced at the EUR/USD rate of ${rate.date}`);
      assert.equal(typeof order.expected_share_price_in_currency, 'number');
    }
    for (const [isin, order] of Object.entries(o.orders).filter(([i]) => !model.usdEquity.includes(i))) assert.equal(order.currency, undefined, isin);

    // The ORDER transactions: dollar ETFs in USD at the dollar price, the others in EUR.
    const trades = await transactionsOf(machine, portfolioId, 'ORDER');
    assert.equal(trades.length, Object.keys(o.orders).length);
    for (const t of trades) {
      const order = o.orders[t.instrument_id]!;
      assert.deepEqual(
        [t.status, t.currency, t.quantity, t.unit_price, t.optimization_id],
        ['SETTLED', order.currency ?? 'EUR', String(order.shares), String(order.expected_share_price_in_currency ?? order.expected_share_price), o.id],
      );
    }

    // The conversion the test predicts: all the dollars the buys need (none were held), its base amount and cost in cents.
    const usdNeed = sum(dollarOrders.map(([, order]) => d(order.shares).times(d(order.expected_share_price_in_currency!))));
    const rateText = toText(d(fxRate));
    const eurAmount = usdNeed.times(d(rateText)).toDecimalPlaces(2); // Money rounds half to even
    const cost: Money = eurAmount.times(FX_COST_BPS).div(10_000).toDecimalPlaces(2);
    const fx = await transactionsOf(machine, portfolioId, 'FX');
    assert.equal(fx.length, 1, 'one conversion, into dollars');
    assert.deepEqual(
      [fx[0]!.status, fx[0]!.currency, fx[0]!.instrument_id, fx[0]!.quantity, fx[0]!.unit_price, fx[0]!.optimization_id],
      ['SETTLED', 'USD', '$USD', toText(usdNeed), rateText, o.id],
    );
    assert.deepEqual(fx[0]!.conversion, {
      from_currency: 'EUR',
      from_amount: toText(eurAmount),
      to_currency: 'USD',
      to_amount: toText(usdNeed),
      rate: rateText,
      cost: toText(cost),
      cost_currency: 'EUR',
    });

    // The holdings: positions by the fills, the dollars bought all spent, the euros less EUR buys, every cost and the conversion.
    const eurBuys = sum(
      Object.values(o.orders)
        .filter((order) => order.currency === undefined)
        .map((order) => d(order.shares).times(d(order.expected_share_price))),
    );
    const costs = sum(Object.values(o.orders).map((order) => d(order.expected_transaction_cost)));
    const eur = d('10000.00').minus(eurBuys).minus(costs).minus(eurAmount).minus(cost);
    const expected: Record<string, number> = { $EUR: Number(toText(eur)), $USD: 0 };
    for (const [isin, order] of Object.entries(o.orders)) expected[isin] = order.shares;
    const after = await holdingsOf(machine, portfolioId);
    assert.deepEqual(after, expected);
    assert.ok(!eur.isNegative(), 'the euro cash stays at or above zero');
    const cashInEur = d(after.$EUR!).plus(d(after.$USD!).times(d(rateText)));
    assert.ok(!cashInEur.isNegative(), 'the cash of every currency, in euros, stays at or above zero');
  });

  it('refuses an optimization whose dollar rate is too old for the request’s day, naming the pair, and books nothing', async function () {
    const age = ageInDays(rate.date, Date.now());
    // A rate of today is never too old; the run's sample ends on a fixed past day, so this holds but on that day.
    if (age === 0) this.skip();
    const stale = await startTestPlatform({ FX_MAX_AGE_DAYS: String(age - 1) }, { ownNats: true });
    try {
      const { machine, portfolioId } = await dollarPortfolio(stale, model);
      await fund(machine, portfolioId, 10000);
      const o = await latest(machine, portfolioId);
      assert.equal(o.status, 'FAILURE');
      const detail = String(o.status_detail);
      assert.match(detail, /USD\/EUR/, 'the pair is named');
      assert.ok(detail.includes(`of ${rate.date} is older than ${age - 1} days`), detail);
      for (const isin of model.usdEquity) assert.ok(detail.includes(isin), `${isin} is named: ${detail}`);
      assert.deepEqual(o.orders, {});
      assert.equal(o.execution_status, null);
      assert.deepEqual(await transactionsOf(machine, portfolioId, 'ORDER'), []);
      assert.deepEqual(await transactionsOf(machine, portfolioId, 'FX'), []);
      assert.deepEqual(await holdingsOf(machine, portfolioId), { $EUR: 10000 }, 'only the funding is there');
    } finally {
      await stale.stop();
    }
  });
});
