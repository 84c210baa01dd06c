import assert from 'node:assert/strict';
import { parseDecimal, toText } from '@platform/shared';
import { InvalidField, StateConflict } from '../../src/domain/errors.ts';
import { brokerFor, serviceExecutes } from '../../src/domain/broker-role.ts';
import { cashDelta, checkFills, holdingsAfterFills, orderLines, type Fill, type OrderLine } from '../../src/domain/execution.ts';
import { checkWithdrawalRequest, roboWithdrawalAmount, withdrawalPatch } from '../../src/domain/funding.ts';
import type { Doc } from '../../src/domain/merge.ts';

const A = 'IE00B4L5Y983';
const B = 'IE00B3F81409';
const C = 'LU0290358497';

const portfolio = (over: Doc = {}, settings: Doc = {}): Doc => ({
  base_currency: 'EUR',
  money_type: 'REAL_MONEY',
  archived: false,
  status: 'ACTIVE',
  portfolio: {},
  config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: { policy_id: 'Y1', ...settings } },
  ...over,
});
const userManaged = (over: Doc = {}): Doc => portfolio({ config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} }, ...over });
const line = (isin: string, shares: string, price: string, cost = '0'): OrderLine => ({ isin, shares, price, cost });
/** The broker filled every order as placed. */
const filledAsOrdered = (lines: OrderLine[]): Fill[] =>
  lines.map((l) => ({ isin: l.isin, shares: l.shares, price: l.price, currency: 'EUR', reference: `R-${l.isin}` }));
const none = { withdrawal: false, execution: false };

describe('execution rules (docs/adr/0022-execution-and-withdrawals.md)', () => {
  it('lets the service execute PAPER_MONEY portfolios always and REAL_MONEY ones with SERVICE integration only', () => {
    assert.equal(serviceExecutes('CLIENT', portfolio({ money_type: 'PAPER_MONEY' })), true);
    assert.equal(serviceExecutes('SERVICE', portfolio({ money_type: 'PAPER_MONEY' })), true);
    assert.equal(serviceExecutes('SERVICE', portfolio()), true);
    assert.equal(serviceExecutes('CLIENT', portfolio()), false);
    assert.equal(brokerFor(portfolio({ money_type: 'PAPER_MONEY' })), 'PAPER');
    assert.equal(brokerFor(portfolio()), 'CONFIGURED');
  });

  it('turns the optimization’s orders into decimal lines by ISIN, without zero orders', () => {
    const orders = {
      [B]: { shares: -2.5, expected_share_price: 101.1, expected_transaction_cost: 0.3 },
      [A]: { shares: 8, expected_share_price: 87.52, expected_transaction_cost: 0.7 },
      [C]: { shares: 0, expected_share_price: 10, expected_transaction_cost: 0 },
    };
    assert.deepEqual(orderLines(orders), [line(B, '-2.5', '101.1', '0.3'), line(A, '8', '87.52', '0.7')]);
    assert.deepEqual(orderLines({}), []);
  });

  it('moves the cash by −Σ shares × price − Σ costs, exactly: 3 × 33.33 + 0.1 + 0.2 is 100.29', () => {
    const lines = [line(A, '3', '33.33', '0.1'), line(B, '1', '0', '0.2')];
    assert.equal(toText(cashDelta(lines, filledAsOrdered(lines))), '-100.29');
    // A sell adds its proceeds less its cost.
    const sell = [line(A, '-3', '33.33', '0.1')];
    assert.equal(toText(cashDelta(sell, filledAsOrdered(sell))), '99.89');
    // Costs are counted for filled ISINs only.
    assert.equal(toText(cashDelta(lines, filledAsOrdered(lines).slice(0, 1))), '-100.09');
  });

  it('moves each position by its fill, removes one that reaches 0 and keeps the cash key at 0', () => {
    const doc = portfolio({ portfolio: { [A]: 2, [B]: 5, $EUR: 100.29 } });
    const lines = [line(A, '3', '33.33', '0.1'), line(B, '-5', '7', '0.2'), line(C, '0.1', '2', '0')];
    const fills = filledAsOrdered(lines);
    // 100.29 − 99.99 − 0.1 + 35 − 0.2 − 0.2 = 34.8
    assert.deepEqual(holdingsAfterFills(doc, 'EUR', lines, fills), { [A]: 5, [C]: 0.1, $EUR: 34.8 });
    const spendAll = [line(A, '1', '100.19', '0.1')];
    assert.deepEqual(holdingsAfterFills(portfolio({ portfolio: { $EUR: 100.29 } }), 'EUR', spendAll, filledAsOrdered(spendAll)), { [A]: 1, $EUR: 0 });
    // Binary floats would say 0.30000000000000004.
    const dimes = [line(A, '-1', '0.1'), line(B, '-1', '0.2')];
    assert.equal(holdingsAfterFills(portfolio({ portfolio: { [A]: 1, [B]: 1 } }), 'EUR', dimes, filledAsOrdered(dimes)).$EUR, 0.3);
  });

  it('checks fills against the orders: partial fills pass, strangers, repeats, wrong signs, excess and negative prices throw', () => {
    const lines = [line(A, '10', '5'), line(B, '-4', '3')];
    const fill = (isin: string, shares: string, price = '5', currency = 'EUR'): Fill => ({ isin, shares, price, currency, reference: 'R' });
    assert.deepEqual(checkFills(lines, [fill(A, '7'), fill(B, '0', '3')], 'EUR'), [fill(A, '7')]);
    assert.throws(() => checkFills(lines, [fill(C, '1')], 'EUR'), /not ordered/);
    assert.throws(() => checkFills(lines, [fill(A, '1'), fill(A, '1')], 'EUR'), /twice/);
    assert.throws(() => checkFills(lines, [fill(B, '4', '3')], 'EUR'), /were ordered/);
    assert.throws(() => checkFills(lines, [fill(A, '11')], 'EUR'), /were ordered/);
    assert.throws(() => checkFills(lines, [fill(A, '1', '-5')], 'EUR'), /negative price/);
    assert.throws(() => checkFills(lines, [fill(A, '1e2')], 'EUR'), /not a decimal/);
  });
});

describe('withdrawal rules (docs/adr/0022-execution-and-withdrawals.md)', () => {
  const robo = (cash: number, divest: number, holdings: Doc = {}) => portfolio({ portfolio: { ...holdings, $EUR: cash } }, { divest_amount: divest });

  it('pays out a divest_amount on its change only when the cash covers it (everything: when all is cash)', () => {
    assert.equal(toText(roboWithdrawalAmount(robo(100, 30), 'SERVICE', 'DIVEST_AMOUNT', none)!), '30');
    assert.equal(toText(roboWithdrawalAmount(robo(100, 100), 'SERVICE', 'DIVEST_AMOUNT', none)!), '100');
    assert.equal(roboWithdrawalAmount(robo(100, 100.01), 'SERVICE', 'DIVEST_AMOUNT', none), undefined);
    assert.equal(roboWithdrawalAmount(robo(100, 1e100, { [A]: 3 }), 'SERVICE', 'DIVEST_AMOUNT', none), undefined);
    assert.equal(toText(roboWithdrawalAmount(robo(100.5, 1e100), 'SERVICE', 'DIVEST_AMOUNT', none)!), '100.5');
  });

  it('pays out min(divest_amount, cash) after an execution, all the cash for everything', () => {
    assert.equal(toText(roboWithdrawalAmount(robo(60, 100), 'SERVICE', 'EXECUTION', none)!), '60');
    assert.equal(toText(roboWithdrawalAmount(robo(160, 100), 'SERVICE', 'EXECUTION', none)!), '100');
    assert.equal(toText(roboWithdrawalAmount(robo(42.42, 1e100, { [A]: 1 }), 'SERVICE', 'EXECUTION', none)!), '42.42');
    assert.equal(roboWithdrawalAmount(robo(0, 100), 'SERVICE', 'EXECUTION', none), undefined);
  });

  it('pays out nothing for real money with CLIENT integration, user-managed portfolios, no divest_amount, or one in flight', () => {
    assert.equal(roboWithdrawalAmount(robo(100, 30), 'CLIENT', 'DIVEST_AMOUNT', none), undefined);
    assert.equal(roboWithdrawalAmount(userManaged({ portfolio: { $EUR: 100 } }), 'SERVICE', 'EXECUTION', none), undefined);
    assert.equal(roboWithdrawalAmount(robo(100, 0), 'SERVICE', 'DIVEST_AMOUNT', none), undefined);
    assert.equal(roboWithdrawalAmount(robo(100, 30), 'SERVICE', 'DIVEST_AMOUNT', { withdrawal: true, execution: false }), undefined);
    // An execution in flight will look again when it settles; the execution's own trigger does not wait for itself.
    assert.equal(roboWithdrawalAmount(robo(100, 30), 'SERVICE', 'DIVEST_AMOUNT', { withdrawal: false, execution: true }), undefined);
    assert.equal(toText(roboWithdrawalAmount(robo(100, 30), 'SERVICE', 'EXECUTION', { withdrawal: false, execution: true })!), '30');
  });

  it('pays out paper money whatever the integration: the simulated broker moves its cash', () => {
    for (const integration of ['CLIENT', 'SERVICE'] as const) {
      assert.equal(toText(roboWithdrawalAmount({ ...robo(100, 30), money_type: 'PAPER_MONEY' }, integration, 'DIVEST_AMOUNT', none)!), '30');
    }
  });

  it('books a paid-out withdrawal even where the cash no longer covers it, but refuses a reported one', () => {
    const doc = robo(10, 50);
    assert.throws(() => withdrawalPatch(doc, parseDecimal('20')), StateConflict);
    assert.deepEqual(withdrawalPatch(doc, parseDecimal('20'), { mustCover: false }), {
      portfolio: { $EUR: -10 },
      config: { manager_settings: { divest_amount: 30 } },
    });
  });

  it('accepts a user-managed SERVICE withdrawal the cash covers, in the base currency', () => {
    assert.equal(toText(checkWithdrawalRequest(userManaged({ portfolio: { $EUR: 100 } }), 'SERVICE', '100.00', 'EUR', false)), '100');
  });

  it('refuses every other withdrawal request with 409 (422 for a zero amount)', () => {
    const ok = userManaged({ portfolio: { $EUR: 100 } });
    const refusals: [Doc, 'CLIENT' | 'SERVICE', string, string, boolean, RegExp][] = [
      [ok, 'CLIENT', '1', 'EUR', false, /USER_MANAGED REAL_MONEY/],
      [robo(100, 0), 'SERVICE', '1', 'EUR', false, /divest_amount/],
      [{ ...ok, money_type: 'PAPER_MONEY' }, 'SERVICE', '1', 'EUR', false, /REAL_MONEY/],
      [{ ...ok, archived: true }, 'SERVICE', '1', 'EUR', false, /archived/],
      [{ ...ok, status: 'INACTIVE' }, 'SERVICE', '1', 'EUR', false, /INACTIVE/],
      [ok, 'SERVICE', '1', 'USD', false, /base currency EUR/],
      [ok, 'SERVICE', '1', 'EUR', true, /still with the broker/],
      [ok, 'SERVICE', '100.01', 'EUR', false, /holds 100 EUR/],
    ];
    for (const [doc, integration, amount, currency, inFlight, message] of refusals) {
      assert.throws(
        () => checkWithdrawalRequest(doc, integration, amount, currency, inFlight),
        (e: Error) => e instanceof StateConflict && message.test(e.message),
      );
    }
    assert.throws(() => checkWithdrawalRequest(ok, 'SERVICE', '0', 'EUR', false), InvalidField);
  });
});
