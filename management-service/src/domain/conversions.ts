import { parseDecimal, sum, type Money } from '@platform/shared';
import type { Fill, OrderLine } from './execution.ts';

/**
 * What an execution converts between currencies (docs/adr/0022-execution-and-withdrawals.md), pure and exact.
 * Orders of an instrument priced in another currency than the portfolio's base currency are paid in that currency;
 * its cash pays first, and only the rest is bought with the base currency, as a broker account in several currencies does.
 */

/**
 * One conversion: `amount` units of `currency` bought with the base currency (negative: sold for it) at `rate` (the
 * base-currency value of one unit), worth `baseAmount` in the base currency (signed like `amount`), costing `cost`.
 */
export type Conversion = { currency: string; amount: Money; rate: Money; baseAmount: Money; cost: Money };

const ZERO = parseDecimal('0');
const CENTS = 2;
const BPS = parseDecimal('10000');

/** Cents, half to even: what a bank books; an exact product of a rate would not fit a holding's JSON number. */
export const toCents = (value: Money): Money => value.toDecimalPlaces(CENTS); // Money rounds half to even

/** A line's currency: its own for an instrument in another currency, undefined for the base currency. */
export const foreignCurrency = (line: OrderLine): string | undefined => line.currency;

/** What the fills of each other currency pay in it: Σ shares × price in the currency (a sell's shares are negative). */
export function tradedByCurrency(lines: OrderLine[], fills: Fill[]): Map<string, Money> {
  const currencyOf = new Map(lines.map((l) => [l.isin, foreignCurrency(l)]));
  const traded = new Map<string, Money>();
  for (const fill of fills) {
    const currency = currencyOf.get(fill.isin);
    if (currency === undefined) continue;
    traded.set(currency, (traded.get(currency) ?? ZERO).plus(parseDecimal(fill.shares).times(parseDecimal(fill.price))));
  }
  return traded;
}

/**
 * The conversions of the fills, one per other currency that needs one, by currency: buys beyond the cash held in the
 * currency (`held`, never counted below 0) buy the rest; sales that free the currency on balance sell what they free.
 * y = max(n − a, −n, 0), as the optimizer planned it (docs/adr/0020-optimizer-model.md). The rate and the cost's basis
 * points are the orders' of that currency; the base amount and the cost are rounded to cents, half to even.
 */
export function conversionsOf(lines: OrderLine[], fills: Fill[], held: (currency: string) => Money): Conversion[] {
  const first = new Map<string, OrderLine>();
  for (const line of lines) if (line.currency !== undefined && !first.has(line.currency)) first.set(line.currency, line);
  const out: Conversion[] = [];
  for (const [currency, net] of [...tradedByCurrency(lines, fills)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const cash = held(currency);
    const available = cash.isNegative() ? ZERO : cash;
    const amount = net.gt(available) ? net.minus(available) : net.isNegative() ? net : ZERO;
    if (amount.isZero()) continue;
    const line = first.get(currency)!;
    const rate = parseDecimal(line.fx_rate ?? '0');
    const baseAmount = toCents(amount.times(rate));
    const cost = toCents(
      baseAmount
        .abs()
        .times(parseDecimal(line.fx_cost_bps ?? '0'))
        .div(BPS),
    );
    out.push({ currency, amount, rate, baseAmount, cost });
  }
  return out;
}

/** What the conversions take from the base currency: their base amounts (negative for sales) and every cost. */
export const conversionsBaseCost = (conversions: Conversion[]): Money => sum(conversions.map((c) => c.baseAmount.plus(c.cost)));
