import { fromNumber, parseDecimal, sum, toText, type Money } from '@platform/shared';
import { cashKey, cashOf } from './funding.ts';
import type { Doc, Json } from './merge.ts';

/**
 * Execution of an optimization's orders by the service (docs/adr/0022-execution-and-withdrawals.md): the rules, pure.
 * Shares, prices and costs travel as exact decimal text; holdings stay JSON numbers, summed exactly.
 */

/** One order as handed to the broker and as booked; `shares` negative for a sell, `cost` the expected transaction cost. */
export type OrderLine = { isin: string; shares: string; price: string; cost: string };

/** What the broker executed for one ISIN: `shares` signed like the order's, at `price`. */
export type Fill = { isin: string; shares: string; price: string; reference: string };

const decimal = (value: Json | undefined): string => toText(fromNumber(typeof value === 'number' ? value : 0));

/** The optimization's orders (ISIN → {shares, expected_share_price, expected_transaction_cost}) as lines, by ISIN, without zero orders. */
export function orderLines(orders: Doc): OrderLine[] {
  return Object.entries(orders)
    .map(([isin, order]) => {
      const o = (order ?? {}) as Doc;
      return { isin, shares: decimal(o.shares), price: decimal(o.expected_share_price), cost: decimal(o.expected_transaction_cost) };
    })
    .filter((line) => !parseDecimal(line.shares).isZero())
    .sort((a, b) => (a.isin < b.isin ? -1 : a.isin > b.isin ? 1 : 0));
}

/** The cash an execution moves: −Σ shares × price − Σ costs of the filled ISINs (a sell's shares are negative, so it adds). */
export function cashDelta(lines: OrderLine[], fills: Fill[]): Money {
  const cost = new Map(lines.map((l) => [l.isin, parseDecimal(l.cost)]));
  const traded = sum(fills.map((f) => parseDecimal(f.shares).times(parseDecimal(f.price))));
  const costs = sum(fills.map((f) => cost.get(f.isin) ?? parseDecimal('0')));
  return traded.plus(costs).negated();
}

/**
 * The holdings after the fills: each ISIN's quantity moved by its filled shares, the cash of `currency` by
 * cashDelta. A position that reaches exactly 0 is removed (holdings list what is held); the cash key stays, at 0 too.
 */
export function holdingsAfterFills(doc: Doc, currency: string, lines: OrderLine[], fills: Fill[]): Doc {
  const holdings: Doc = { ...((doc.portfolio ?? {}) as Doc) };
  for (const fill of fills) {
    const before = holdings[fill.isin];
    const quantity = fromNumber(typeof before === 'number' ? before : 0).plus(parseDecimal(fill.shares));
    if (quantity.isZero()) delete holdings[fill.isin];
    else holdings[fill.isin] = quantity.toNumber();
  }
  holdings[cashKey(currency)] = cashOf(doc, currency).plus(cashDelta(lines, fills)).toNumber();
  return holdings;
}

/** The fields an optimization's next version stores about its execution. */
export const executionFields = (status: 'PENDING' | 'EXECUTED' | 'REFUSED', detail: string | null = null): Doc => ({
  execution_status: status,
  execution_detail: detail,
});

/**
 * The broker's fills checked against the orders: one at most per ordered ISIN, decimal shares with the order's sign and
 * no more than ordered, a decimal price. Zero fills are dropped. Throws on anything else (a broker error, never booked).
 */
export function checkFills(lines: OrderLine[], fills: Fill[]): Fill[] {
  const ordered = new Map(lines.map((l) => [l.isin, parseDecimal(l.shares)]));
  const seen = new Set<string>();
  const out: Fill[] = [];
  for (const fill of fills) {
    const wanted = ordered.get(fill.isin);
    if (!wanted) throw new Error(`the broker filled ${fill.isin}, which was not ordered`);
    if (seen.has(fill.isin)) throw new Error(`the broker filled ${fill.isin} twice`);
    seen.add(fill.isin);
    const shares = parseDecimal(fill.shares);
    if (parseDecimal(fill.price).isNegative()) throw new Error(`the broker filled ${fill.isin} at the negative price ${fill.price}`);
    if (shares.isZero()) continue;
    if (shares.isNegative() !== wanted.isNegative() || shares.abs().gt(wanted.abs()))
      throw new Error(`the broker filled ${fill.shares} shares of ${fill.isin}; ${toText(wanted)} were ordered`);
    out.push(fill);
  }
  return out;
}
