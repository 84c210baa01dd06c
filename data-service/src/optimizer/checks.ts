// Orders checked against the constraints in exact decimal, with a tolerance of one cent, before the
// solver's answer is trusted (the model in ./problem.ts).
import { fromNumber, type Money } from '@platform/shared';
import { conversions } from './conversions.ts';
import { CENT, money, requiredCash, SHARE_DECIMALS, ZERO, type Problem } from './problem.ts';
import type { Relaxable } from './program.ts';

/** What a constraint would need; `amount` is the shortfall (or excess) in the base currency. */
export function shortfall(problem: Problem, constraint: Relaxable, amount: Money): string {
  const cur = problem.currency;
  if (constraint.kind === 'cash') {
    const what = problem.divest.isZero()
      ? `cash buffer ${problem.cashBuffer}`
      : `cash buffer ${problem.cashBuffer} and divest amount ${money(problem.divest)} ${cur}`;
    return `${what} cannot be met: ${money(requiredCash(problem))} ${cur} needed in cash after trades, short by ${money(amount)} ${cur}`;
  }
  const { band } = constraint;
  if (constraint.kind === 'lower') {
    const bound = fromNumber(band.lower).times(problem.invested);
    return `asset class ${band.assetClass} lower bound ${band.lower} cannot be met: at least ${money(bound)} ${cur} needed, short by ${money(amount)} ${cur}`;
  }
  const bound = fromNumber(band.upper).times(problem.invested);
  return `asset class ${band.assetClass} upper bound ${band.upper} cannot be met: at most ${money(bound)} ${cur} allowed, over by ${money(amount)} ${cur}`;
}

/**
 * Every way `orders` (net shares by ISIN) break the model: unknown ISINs, buys outside the model
 * portfolio, short positions, shares that are not whole (or beyond 6 decimals when fractional;
 * selling a whole fractional holding is allowed), and, with a tolerance of one cent, the cash
 * constraint (with the cost of converting between currencies) and every band. Empty when the orders are sound.
 */
export function checkOrders(problem: Problem, orders: ReadonlyMap<string, number>): string[] {
  const violations: string[] = [];
  const byIsin = new Map(problem.instruments.map((i) => [i.isin, i]));
  for (const [isin, shares] of orders) {
    const i = byIsin.get(isin);
    if (!i) {
      violations.push(`${isin} is not an instrument of the request`);
      continue;
    }
    if (!Number.isFinite(shares)) violations.push(`${isin}: ${shares} shares`);
    if (shares > 0 && !i.buyable) violations.push(`${isin} is bought but not in the model portfolio`);
    if (shares > 0 && problem.sellEverything) violations.push(`${isin} is bought although everything is to be sold`);
    if (fromNumber(i.held).plus(fromNumber(shares)).lt(ZERO)) violations.push(`${isin}: selling ${-shares} of ${i.held} shares leaves a short position`);
    const sellsAll = shares === -i.held;
    if (!problem.fractional && !Number.isInteger(shares) && !sellsAll) violations.push(`${isin}: ${shares} shares is not a whole number`);
    if (problem.fractional && !sellsAll && Number.isFinite(shares) && fromNumber(shares).decimalPlaces() > SHARE_DECIMALS)
      violations.push(`${isin}: ${shares} shares has more than ${SHARE_DECIMALS} decimals`);
  }
  if (problem.sellEverything) {
    for (const i of problem.instruments)
      if (i.held > 0 && orders.get(i.isin) !== -i.held) violations.push(`${i.isin} is not sold entirely although everything is to be sold`);
  }

  let traded = ZERO;
  let costs = ZERO;
  const after = new Map<string, Money>();
  for (const i of problem.instruments) {
    const shares = fromNumber(orders.get(i.isin) ?? 0);
    const price = fromNumber(i.price);
    traded = traded.plus(price.times(shares));
    costs = costs.plus(problem.costRate.times(price).times(shares.abs()));
    if (i.assetClass !== null) after.set(i.assetClass, (after.get(i.assetClass) ?? ZERO).plus(price.times(fromNumber(i.held).plus(shares))));
  }
  // Converting between currencies costs f on each currency's converted amount (conversions.ts).
  const cashAfter = problem.cash.minus(traded).minus(costs).minus(conversions(problem, orders).cost);
  const needed = requiredCash(problem);
  if (cashAfter.lt(needed.minus(CENT)))
    violations.push(`cash after trades ${money(cashAfter)} ${problem.currency} is below the ${money(needed)} ${problem.currency} required`);
  for (const band of problem.bands) {
    const held = after.get(band.assetClass) ?? ZERO;
    const lower = fromNumber(band.lower).times(problem.invested);
    const upper = fromNumber(band.upper).times(problem.invested);
    if (held.lt(lower.minus(CENT)))
      violations.push(
        `asset class ${band.assetClass} at ${money(held)} ${problem.currency} is below its lower bound ${band.lower} (${money(lower)} ${problem.currency})`,
      );
    if (held.gt(upper.plus(CENT)))
      violations.push(
        `asset class ${band.assetClass} at ${money(held)} ${problem.currency} is above its upper bound ${band.upper} (${money(upper)} ${problem.currency})`,
      );
  }
  return violations;
}
