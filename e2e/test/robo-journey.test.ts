import assert from 'node:assert/strict';
import { parseDecimal, sum, toText } from '@platform/shared';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { machineClient, managementClient } from '../src/clients.ts';
import { eurEtfModel, type SampleModel } from '../src/sample-model.ts';
import { eventsSettled } from '@platform/test-support/database';

// The robo-advice journey across both services (management service, NATS, the data service's
// optimizer, the simulated broker): funding → optimization → the owner's acceptance or the
// recommendation → execution → withdrawal request → cash freed → withdrawal executed, for an
// advisory and a discretionary mandate, in paper and real money, with both broker integrations.
// Every outbound event of the portfolio is asserted, in order, through GET /events/.

type Client = ReturnType<typeof managementClient>;
type Event = { id: string; subject: string; action: string; data: Record<string, unknown> };
type Optimization = { id: string; status: string; is_recommended: boolean; owner_choice: string | null; execution_status: string | null; orders: Orders };
type Orders = Record<string, { shares: number; expected_share_price: number; expected_transaction_cost: number }>;
type Mandate = 'ROBO_ADVISOR_ADVISORY' | 'ROBO_ADVISOR_DISCRETIONARY';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** One customer's portfolio under one tenant, with the tenant's machine client and the customer's own token. */
type Journey = {
  machine: Client;
  customer: Client;
  portfolioId: string;
  /** The names of the portfolio's outbound events since the previous call (`<subject>.<action>[=value]`). */
  events: () => Promise<string[]>;
};

describe('robo-advice journeys across both services', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let model: SampleModel;

  before(async () => {
    platform = await startTestPlatform({ BROKER_SIMULATED_LATENCY_MS: '5' }, { ownNats: true });
    model = await eurEtfModel(platform.dataUrl, await platform.tenant());
  });
  after(() => platform?.stop());

  async function onboard(integration: 'CLIENT' | 'SERVICE', mandate: Mandate, money: 'REAL_MONEY' | 'PAPER_MONEY'): Promise<Journey> {
    const tenant = await platform.tenant(undefined, { brokerIntegration: integration });
    const machine = machineClient(platform.managementUrl, tenant);
    const user = await machine.POST('/users/', { body: { first_name: 'Grace', last_name: 'Hopper', external_id: 'crm-1' } });
    const policy = await machine.POST('/policies/', {
      body: {
        name: 'Balanced',
        config: {
          minimum_funding_amount: '1000',
          cash_buffer: 0.02,
          rebalancing_threshold: 0.05,
          transaction_cost_bps: 10,
          model_portfolio: { [model.equity[0]!]: 0.4, [model.equity[1]!]: 0.2, [model.bonds[0]!]: 0.38 },
          asset_class_bands: { EQUITY: [0.5, 0.7], FIXED_INCOME: [0.28, 0.48] },
        },
      },
    });
    assert.equal(policy.response.status, 201);
    const portfolio = await machine.POST('/portfolios/', {
      body: {
        name: 'Robo',
        external_id: 'pf-1',
        owned_by_user_id: user.data!.id,
        base_currency: 'EUR',
        money_type: money,
        config: { manager: mandate, manager_version: 1, manager_settings: { policy_id: policy.data!.id } },
        ...(integration === 'SERVICE' ? { brokerage_account: { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000' } } : {}),
      },
    });
    assert.equal(portfolio.response.status, 201);
    const portfolioId = portfolio.data!.id;
    const token = await machine.POST('/auth/user-token/', { body: { user_id: user.data!.id } });
    const customer = managementClient(platform.managementUrl, token.data!.access_token);
    let cursor: string | undefined;
    const events = async () => {
      await eventsSettled(platform.database.db);
      const page = await machine.GET('/events/', { params: { query: { limit: 1000, ...(cursor ? { after: cursor } : {}) } } });
      assert.equal(page.response.status, 200);
      cursor = page.data!.next_cursor;
      return (page.data!.results as unknown as Event[])
        .filter((e) => e.data.id === portfolioId || e.data.portfolio_id === portfolioId)
        .map((e) => `${e.subject}.${e.action}${e.data.value === undefined ? '' : `=${String(e.data.value)}`}`);
    };
    assert.deepEqual(await events(), ['portfolios.creation'], 'the creation event (the status follows from the start)');
    return { machine, customer, portfolioId, events };
  }

  const portfolioOf = async (j: Journey) => {
    const res = await j.machine.GET('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: j.portfolioId } } });
    assert.equal(res.response.status, 200);
    return res.data!;
  };
  const holdings = async (j: Journey) => (await portfolioOf(j)).portfolio as Record<string, number>;
  const divestAmount = async (j: Journey) => (await portfolioOf(j)).config.manager_settings.divest_amount;

  /** The customer, with their own token, asks to withdraw `amount` (divest_amount). */
  const customerWithdraws = async (j: Journey, amount: number) => {
    const res = await j.customer.PATCH('/portfolios/{portfolio_id}', {
      params: { path: { portfolio_id: j.portfolioId } },
      body: { config: { manager_settings: { divest_amount: amount } } },
    });
    assert.equal(res.response.status, 200, 'the customer may ask for a withdrawal');
  };

  /** The newest optimization once the optimizer has answered it (202 while it computes). */
  const answered = (j: Journey, after?: string) =>
    eventually('the optimizer to answer', async () => {
      const res = await j.machine.GET('/portfolios/{portfolio_id}/optimizations/latest/', { params: { path: { portfolio_id: j.portfolioId } } });
      const o = res.data as Optimization | undefined;
      return res.response.status === 200 && o && o.id !== after ? o : undefined;
    });
  const optimization = async (j: Journey, id: string) => {
    const res = await j.machine.GET('/optimizations/{optimization_id}', { params: { path: { optimization_id: id } } });
    assert.equal(res.response.status, 200);
    return res.data as Optimization;
  };
  const executed = (j: Journey, id: string) =>
    eventually('the broker to execute the orders', async () => {
      const o = await optimization(j, id);
      return o.execution_status === 'EXECUTED' ? o : undefined;
    });
  const accept = async (j: Journey, id: string) => {
    const res = await j.customer.PATCH('/optimizations/{optimization_id}', { params: { path: { optimization_id: id } }, body: { owner_choice: 'ACCEPT' } });
    assert.equal(res.response.status, 200);
    assert.equal(res.data!.owner_choice, 'ACCEPT');
  };
  const orderTransactions = async (j: Journey) => {
    const res = await j.machine.GET('/portfolios/{portfolio_id}/transactions/', {
      params: { path: { portfolio_id: j.portfolioId }, query: { query: "type eq 'ORDER'", limit: 100 } },
    });
    return res.data!.results;
  };
  const cashTransactions = async (j: Journey) => {
    const res = await j.machine.GET('/portfolios/{portfolio_id}/transactions/', {
      params: { path: { portfolio_id: j.portfolioId }, query: { query: "type eq 'CASH' orderby datetime", limit: 100 } },
    });
    return res.data!.results.map((t) => ({ quantity: t.quantity, status: t.status }));
  };

  /** Holdings after the orders at their expected prices and costs, in exact decimals. */
  function afterOrders(before: Record<string, number>, orders: Orders): Record<string, number> {
    const next: Record<string, number> = { ...before };
    let cash = parseDecimal(String(before.$EUR ?? 0));
    for (const [isin, order] of Object.entries(orders)) {
      const shares = parseDecimal(String(order.shares));
      const held = sum([parseDecimal(String(before[isin] ?? 0)), shares]);
      if (held.isZero()) delete next[isin];
      else next[isin] = Number(toText(held));
      cash = cash.minus(shares.times(parseDecimal(String(order.expected_share_price)))).minus(parseDecimal(String(order.expected_transaction_cost)));
    }
    next.$EUR = Number(toText(cash));
    return next;
  }

  /**
   * The events an optimization the journey did not steer causes: its status-update when SUCCESS, and
   * IGNORED when a newer one supersedes it while it awaits an advisory owner's choice.
   */
  const sideEvents = (o: Optimization, mandate: Mandate, supersededLater: boolean) => [
    ...(o.status === 'SUCCESS' ? ['optimizations.status-update=SUCCESS'] : []),
    ...(supersededLater && mandate === 'ROBO_ADVISOR_ADVISORY' && o.status === 'SUCCESS' && o.is_recommended
      ? ['optimizations.owner-choice-update=IGNORED']
      : []),
  ];

  /** The Client Middleware executes orders at its broker: ORDER transactions, then the holdings patched. */
  async function middlewareExecutes(j: Journey, o: Optimization): Promise<Record<string, number>> {
    for (const [isin, order] of Object.entries(o.orders)) {
      const booked = await j.machine.POST('/portfolios/{portfolio_id}/transactions/', {
        params: { path: { portfolio_id: j.portfolioId } },
        body: {
          type: 'ORDER',
          status: 'SETTLED',
          quantity: String(order.shares),
          currency: 'EUR',
          instrument_id: isin,
          unit_price: String(order.expected_share_price),
          optimization_id: o.id,
        },
      });
      assert.equal(booked.response.status, 201);
    }
    const next = afterOrders(await holdings(j), o.orders);
    const patched = await j.machine.PATCH('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: j.portfolioId } }, body: { portfolio: next } });
    assert.equal(patched.response.status, 200);
    return next;
  }

  /** Holdings after a payout of `amount` from the cash. */
  const paidOut = (before: Record<string, number>, amount: string) => ({
    ...before,
    $EUR: Number(toText(parseDecimal(String(before.$EUR)).minus(parseDecimal(amount)))),
  });

  /** SUCCESS, recommended, with buys of the model's instruments only (a first investment of cash). */
  function assertFirstInvestment(o: Optimization) {
    assert.equal(o.status, 'SUCCESS');
    assert.equal(o.is_recommended, true);
    assert.deepEqual(Object.keys(o.orders).sort(), [...model.equity, ...model.bonds].sort());
    for (const order of Object.values(o.orders)) assert.ok(order.shares > 0 && Number.isInteger(order.shares), `whole shares bought: ${order.shares}`);
  }

  /** SUCCESS, recommended, with sells that free the divest amount (and the cash buffer). */
  function assertFreesCash(o: Optimization, before: Record<string, number>, divest: number) {
    assert.equal(o.status, 'SUCCESS');
    assert.equal(o.is_recommended, true);
    assert.ok(
      Object.values(o.orders).some((order) => order.shares < 0),
      'something is sold',
    );
    assert.ok(afterOrders(before, o.orders).$EUR! >= divest, 'the cash after the orders covers the divest amount');
  }

  it('discretionary, real money, broker integrated by the service', async () => {
    const j = await onboard('SERVICE', 'ROBO_ADVISOR_DISCRETIONARY', 'REAL_MONEY');
    const deposit = await j.machine.POST('/events/deposit/', {
      body: { data: { amount: '10000.00', currency: 'EUR', portfolio: j.portfolioId, external_id: 'dep-1' } },
    });
    assert.equal(deposit.response.status, 202, 'the broker moves the cash first');
    const first = await answered(j);
    assertFirstInvestment(first);
    await executed(j, first.id);
    assert.deepEqual(await holdings(j), afterOrders({ $EUR: 10000 }, first.orders));
    assert.equal((await orderTransactions(j)).length, Object.keys(first.orders).length);
    assert.deepEqual(await j.events(), ['portfolios.status-update=ACTIVE', 'notifications.deposit-received', 'optimizations.status-update=SUCCESS']);

    const invested = await holdings(j);
    await customerWithdraws(j, 2000);
    const freeing = await answered(j, first.id);
    assertFreesCash(freeing, invested, 2000);
    await executed(j, freeing.id);
    await eventually('the withdrawal to be paid', async () => ((await divestAmount(j)) === 0 ? true : undefined));
    assert.deepEqual(await holdings(j), paidOut(afterOrders(invested, freeing.orders), '2000'));
    assert.deepEqual(await cashTransactions(j), [
      { quantity: '10000.00', status: 'SETTLED' },
      { quantity: '-2000', status: 'SETTLED' },
    ]);
    assert.deepEqual(await j.events(), [
      'portfolios.divest-amount-update',
      'optimizations.status-update=SUCCESS',
      'portfolios.divest-amount-update',
      'notifications.withdrawal-executed',
    ]);
  });

  it('advisory, real money, broker integrated by the service: nothing executes before the owner accepts', async () => {
    const j = await onboard('SERVICE', 'ROBO_ADVISOR_ADVISORY', 'REAL_MONEY');
    const deposit = await j.machine.POST('/events/deposit/', {
      body: { data: { amount: '10000.00', currency: 'EUR', portfolio: j.portfolioId, external_id: 'dep-1' } },
    });
    assert.equal(deposit.response.status, 202);
    const first = await answered(j);
    assertFirstInvestment(first);
    await sleep(300);
    assert.equal((await optimization(j, first.id)).execution_status, null, 'proposed, not executed');
    assert.deepEqual(await holdings(j), { $EUR: 10000 });
    await accept(j, first.id);
    await executed(j, first.id);
    assert.deepEqual(await holdings(j), afterOrders({ $EUR: 10000 }, first.orders));
    assert.deepEqual(await j.events(), [
      'portfolios.status-update=ACTIVE',
      'notifications.deposit-received',
      'optimizations.status-update=SUCCESS',
      'optimizations.owner-choice-update=ACCEPT',
    ]);

    const invested = await holdings(j);
    await customerWithdraws(j, 2000);
    const freeing = await answered(j, first.id);
    assertFreesCash(freeing, invested, 2000);
    await sleep(300);
    assert.equal(await divestAmount(j), 2000, 'nothing is sold or paid before the owner accepts');
    await accept(j, freeing.id);
    await executed(j, freeing.id);
    await eventually('the withdrawal to be paid', async () => ((await divestAmount(j)) === 0 ? true : undefined));
    assert.deepEqual(await holdings(j), paidOut(afterOrders(invested, freeing.orders), '2000'));
    assert.deepEqual(await j.events(), [
      'portfolios.divest-amount-update',
      'optimizations.status-update=SUCCESS',
      'optimizations.owner-choice-update=ACCEPT',
      'portfolios.divest-amount-update',
      'notifications.withdrawal-executed',
    ]);
  });

  it('advisory, real money, broker integrated by the client: the middleware executes, pays out and reports', async () => {
    const mandate = 'ROBO_ADVISOR_ADVISORY';
    const j = await onboard('CLIENT', mandate, 'REAL_MONEY');
    const deposit = await j.machine.POST('/events/deposit/', {
      body: { data: { amount: '10000.00', currency: 'EUR', portfolio: j.portfolioId, external_id: 'dep-1' } },
    });
    assert.equal(deposit.response.status, 201, 'the middleware reports a settled deposit');
    const first = await answered(j);
    assertFirstInvestment(first);
    await accept(j, first.id);
    await sleep(300);
    assert.equal((await optimization(j, first.id)).execution_status, null, 'the service places no order for a CLIENT integration');
    const invested = await middlewareExecutes(j, first);
    const afterBuying = await answered(j, first.id); // the middleware's holdings change asks the optimizer again
    assert.notEqual(afterBuying.status, 'FAILURE');
    assert.deepEqual(await j.events(), [
      'portfolios.status-update=ACTIVE',
      'notifications.deposit-received',
      'optimizations.status-update=SUCCESS',
      'optimizations.owner-choice-update=ACCEPT',
      ...sideEvents(afterBuying, mandate, false),
    ]);

    await customerWithdraws(j, 2000);
    const freeing = await answered(j, afterBuying.id);
    assertFreesCash(freeing, invested, 2000);
    await accept(j, freeing.id);
    const sold = await middlewareExecutes(j, freeing);
    const afterSelling = await answered(j, freeing.id);
    // The middleware pays the customer: a settled negative CASH transaction, divest_amount back to 0,
    // the cash patched, and its report of the executed withdrawal.
    const cash = await j.machine.POST('/portfolios/{portfolio_id}/transactions/', {
      params: { path: { portfolio_id: j.portfolioId } },
      body: { type: 'CASH', status: 'SETTLED', quantity: '-2000', currency: 'EUR', instrument_id: '$EUR', external_id: 'payout-1' },
    });
    assert.equal(cash.response.status, 201);
    const settled = await j.machine.PATCH('/portfolios/{portfolio_id}', {
      params: { path: { portfolio_id: j.portfolioId } },
      body: { portfolio: paidOut(sold, '2000'), config: { manager_settings: { divest_amount: 0 } } },
    });
    assert.equal(settled.response.status, 200);
    const report = await j.machine.POST('/events/withdraw/', {
      body: { data: { amount: '2000', currency: 'EUR', portfolio: j.portfolioId, external_id: 'payout-1' } },
    });
    assert.ok(report.response.status < 300, `the report is recorded: ${report.response.status}`);
    const afterPayout = await answered(j, afterSelling.id);
    assert.deepEqual(await holdings(j), paidOut(sold, '2000'));
    assert.deepEqual(await j.events(), [
      'portfolios.divest-amount-update',
      ...sideEvents(freeing, mandate, false).slice(0, 1),
      'optimizations.owner-choice-update=ACCEPT',
      'portfolios.cash-available-for-withdrawal',
      ...sideEvents(afterSelling, mandate, true),
      'portfolios.divest-amount-update',
      'notifications.withdrawal-executed',
      ...sideEvents(afterPayout, mandate, false),
    ]);
  });

  it('discretionary, paper money: the simulated broker executes and pays out', async () => {
    const j = await onboard('CLIENT', 'ROBO_ADVISOR_DISCRETIONARY', 'PAPER_MONEY');
    const funded = await j.machine.PATCH('/portfolios/{portfolio_id}', {
      params: { path: { portfolio_id: j.portfolioId } },
      body: { portfolio: { $EUR: 10000 } },
    });
    assert.equal(funded.response.status, 200, 'paper money is funded by setting its cash');
    const first = await answered(j);
    assertFirstInvestment(first);
    await executed(j, first.id);
    assert.deepEqual(await holdings(j), afterOrders({ $EUR: 10000 }, first.orders));
    assert.deepEqual(await j.events(), ['optimizations.status-update=SUCCESS']);

    const invested = await holdings(j);
    await customerWithdraws(j, 2000);
    const freeing = await answered(j, first.id);
    assertFreesCash(freeing, invested, 2000);
    await executed(j, freeing.id);
    await eventually('the withdrawal to be paid', async () => ((await divestAmount(j)) === 0 ? true : undefined));
    assert.deepEqual(await holdings(j), paidOut(afterOrders(invested, freeing.orders), '2000'));
    assert.deepEqual(await j.events(), [
      'portfolios.divest-amount-update',
      'optimizations.status-update=SUCCESS',
      'portfolios.divest-amount-update',
      'notifications.withdrawal-executed',
    ]);
  });
});
