// What orders convert between currencies, and its cost, in exact decimal (the model in ./problem.ts).
import { fromNumber, type Money } from '@platform/shared';
import { ZERO, type Problem } from './problem.ts';

/**
 * The amount (base value) currency k converts: y_k = max(n_k − a_k, −n_k, 0), n_k the net value
 * its orders buy (Σ p_i q_i over its instruments) and a_k its cash. Buys draw on the currency's
 * own cash first and convert only the rest; net sale proceeds are converted to the base currency.
 * The cost is f·Σ y_k. Each currency's cost is shared among the orders that make it, pro rata by
 * value: its buys when it buys beyond its cash, its sells when it sells on balance.
 */
export function conversions(problem: Problem, orders: ReadonlyMap<string, number>): { converted: Map<string, Money>; cost: Money; byIsin: Map<string, Money> } {
  const converted = new Map<string, Money>();
  const byIsin = new Map<string, Money>();
  let cost = ZERO;
  for (const { currency, cash } of problem.foreign) {
    const traded = problem.instruments
      .filter((i) => i.currency === currency && (orders.get(i.isin) ?? 0) !== 0)
      .map((i) => ({ isin: i.isin, value: fromNumber(i.price).times(fromNumber(orders.get(i.isin)!)) }));
    const net = traded.reduce((sum, t) => sum.plus(t.value), ZERO);
    const amount = [net.minus(cash), net.negated()].reduce((most, m) => (m.gt(most) ? m : most), ZERO);
    converted.set(currency, amount);
    if (amount.isZero()) continue;
    const currencyCost = problem.fxRate.times(amount);
    cost = cost.plus(currencyCost);
    const makers = traded.filter((t) => (net.gt(ZERO) ? t.value.gt(ZERO) : t.value.lt(ZERO)));
    const total = makers.reduce((sum, t) => sum.plus(t.value.abs()), ZERO);
    for (const t of makers) byIsin.set(t.isin, currencyCost.times(t.value.abs()).div(total));
  }
  return { converted, cost, byIsin };
}
