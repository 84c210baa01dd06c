import assert from 'node:assert/strict';
import { parseDecimal, toText } from '@platform/shared';
import { ordersNeed, ordersNotCovered } from '../../src/domain/cash-holds.ts';
import { conversionsOf, toCents } from '../../src/domain/conversions.ts';
import { cashMoves, checkFills, filledAsOrdered, holdingsAfterFills, orderLines, type OrderLine } from '../../src/domain/execution.ts';
import type { Doc } from '../../src/domain/merge.ts';

const A = 'IE00B4L5Y983';
const US = 'US4642872000';
const US2 = 'US9229087690';

const eurPortfolio = (holdings: Doc): Doc => ({ base_currency: 'EUR', portfolio: holdings });
const base = (isin: string, shares: string, price: string, cost = '0'): OrderLine => ({ isin, shares, price, cost });
/** An order of a dollar instrument for a EUR portfolio at 0.92 EUR per USD and 10 bps of exchange cost. */
const usd = (isin: string, shares: string, priceUsd: string, cost = '0', rate = '0.92', bps = '10'): OrderLine => ({
  isin,
  shares,
  price: toText(parseDecimal(priceUsd).times(parseDecimal(rate))),
  cost,
  currency: 'USD',
  price_in_currency: priceUsd,
  fx_rate: rate,
  fx_cost_bps: bps,
});
const text = (moves: Map<string, unknown>) => Object.fromEntries([...moves].map(([k, v]) => [k, toText(v as never)]));
const cashOf = (holdings: Doc) => (k: string) => parseDecimal(String(holdings[`$${k}`] ?? 0));

describe('execution in other currencies (docs/adr/0022-execution-and-withdrawals.md)', () => {
  it('reads an order in another currency with its price in it, its rate and the policy’s exchange cost; base orders stay as they were', () => {
    const orders = {
      [US]: {
        shares: 3,
        expected_share_price: 92.46,
        expected_transaction_cost: 0.14,
        currency: 'USD',
        expected_share_price_in_currency: 100.5,
        fx_rate: 0.92,
        expected_fx_cost: 0.28,
      },
      [A]: { shares: 2, expected_share_price: 50, expected_transaction_cost: 0.05 },
    };
    assert.deepEqual(orderLines(orders, 10), [
      base(A, '2', '50', '0.05'),
      { isin: US, shares: '3', price: '92.46', cost: '0.14', currency: 'USD', price_in_currency: '100.5', fx_rate: '0.92', fx_cost_bps: '10' },
    ]);
  });

  it('pays a dollar buy in dollars, converting only what the dollar cash does not cover, at the order’s rate, cost in cents', () => {
    const holdings = { $EUR: 1000, $USD: 10 };
    const lines = [base(A, '2', '50', '0.05'), usd(US, '3', '100.5', '0.14')];
    const fills = filledAsOrdered(lines, 'EUR');
    assert.deepEqual(fills[1], { isin: US, shares: '3', price: '100.5', currency: 'USD', reference: '' });
    const { moves, conversions } = cashMoves('EUR', lines, fills, cashOf(holdings));
    // 3 × 100.5 = 301.5 USD, 10 held: 291.5 converted, worth 291.5 × 0.92 = 268.18 EUR; cost 0.26818 → 0.27.
    assert.deepEqual(
      conversions.map((c) => [c.currency, toText(c.amount), toText(c.rate), toText(c.baseAmount), toText(c.cost)]),
      [['USD', '291.5', '0.92', '268.18', '0.27']],
    );
    // EUR: −2 × 50 − 0.05 − 0.14 − 268.18 − 0.27; USD: −301.5 + 291.5.
    assert.deepEqual(text(moves), { EUR: '-368.64', USD: '-10' });
    assert.deepEqual(holdingsAfterFills(eurPortfolio({ ...holdings, [US]: 1 }), 'EUR', lines, fills), { [A]: 2, [US]: 4, $EUR: 631.36, $USD: 0 });
  });

  it('converts nothing when the dollar cash pays the buys, and converts what sales free back to the base currency', () => {
    const buy = [usd(US, '3', '100.5', '0.14')];
    const rich = { $EUR: 5, $USD: 500 };
    assert.deepEqual(holdingsAfterFills(eurPortfolio(rich), 'EUR', buy, filledAsOrdered(buy, 'EUR')), { [US]: 3, $EUR: 4.86, $USD: 198.5 });
    // Two sells free 2 × 100.5 + 1 × 40.25 = 241.25 USD, worth 221.95 EUR; cost 0.22195 → 0.22; the dollar cash stays.
    const sell = [usd(US, '-2', '100.5', '0.1'), usd(US2, '-1', '40.25', '0.04')];
    const after = holdingsAfterFills(eurPortfolio({ [US]: 2, [US2]: 3, $EUR: 1, $USD: 7 }), 'EUR', sell, filledAsOrdered(sell, 'EUR'));
    assert.deepEqual(after, { [US2]: 2, $EUR: 222.59, $USD: 7 });
    const [sale] = conversionsOf(sell, filledAsOrdered(sell, 'EUR'), () => parseDecimal('7'));
    assert.deepEqual([toText(sale!.amount), toText(sale!.baseAmount), toText(sale!.cost)], ['-241.25', '-221.95', '0.22']);
  });

  it('rounds the base amount and the cost to cents half to even, and never books a binary float sum', () => {
    assert.deepEqual(
      ['0.125', '0.135', '-0.125', '268.185'].map((v) => toText(toCents(parseDecimal(v)))),
      ['0.12', '0.14', '-0.12', '268.18'],
    );
    // 0.1 + 0.2 dollars at a rate of 1: 0.3 exactly, not 0.30000000000000004.
    const dimes = [usd(US, '1', '0.1', '0', '1', '0'), usd(US2, '1', '0.2', '0', '1', '0')];
    assert.deepEqual(holdingsAfterFills(eurPortfolio({ $EUR: 1 }), 'EUR', dimes, filledAsOrdered(dimes, 'EUR')), { [US]: 1, [US2]: 1, $EUR: 0.7, $USD: 0 });
  });

  it('holds for orders of another currency as if none of its cash were there, and says what the conversion needs when refused', () => {
    const lines = [usd(US, '3', '100.5', '0.14')];
    // 268.18 + 9.2 (the 10 USD now counted) = 277.38 converted, cost 0.27738 → 0.28, plus 0.14: 277.8.
    assert.equal(toText(ordersNeed(lines)), '277.8');
    assert.equal(ordersNotCovered({ base_currency: 'EUR', portfolio: { $EUR: 277.8 } }, lines, parseDecimal('0')), undefined);
    assert.equal(
      ordersNotCovered({ base_currency: 'EUR', portfolio: { $EUR: 277.79, $USD: 1000 } }, lines, parseDecimal('0')),
      'the orders need 277.8 EUR (277.66 EUR of it converted into other currencies, with the cost) and 277.79 EUR of the cash is available',
    );
  });

  it('checks that a fill is in the order’s currency', () => {
    const lines = [base(A, '1', '5'), usd(US, '2', '100')];
    const fill = (isin: string, currency: string) => ({ isin, shares: '1', price: '5', currency, reference: 'R' });
    assert.equal(checkFills(lines, [fill(A, 'EUR'), fill(US, 'USD')], 'EUR').length, 2);
    assert.throws(() => checkFills(lines, [fill(A, 'USD')], 'EUR'), /in USD; it is priced in EUR/);
    assert.throws(() => checkFills(lines, [fill(US, 'EUR')], 'EUR'), /in EUR; it is priced in USD/);
  });
});
