import { fromNumber, parseDecimal, sum, toText, type Money } from '@platform/shared';
import { conversionsBaseCost, conversionsOf, tradedByCurrency, type Conversion } from './conversions.ts';
import { cashKey, cashOf } from './funding.ts';
import type { Doc, Json } from './merge.ts';

/**
 * Execution of an optimization's orders by the service (docs/adr/0022-execution-and-withdrawals.md): the rules, pure.
 * Shares, prices and costs travel as exact decimal text; holdings stay JSON numbers, summed exactly.
 */

/**
 * One order as handed to the broker and as booked; `shares` negative for a sell, `price` in the base currency, `cost`
 * the expected transaction cost (base currency). An instrument priced in another currency also has its `currency`,
 * `price_in_currency`, `fx_rate` (the base-currency value of one unit) and the policy's `fx_cost_bps`; a base-currency
 * order has none of them, so it is stored and booked as it always was.
 */
export type OrderLine = {
  isin: string;
  shares: string;
  price: string;
  cost: string;
  currency?: string;
  price_in_currency?: string;
  fx_rate?: string;
  fx_cost_bps?: string;
};

/** What the broker executed for one ISIN: `shares` signed like the order's, at `price` per share in `currency`. */
export type Fill = { isin: string; shares: string; price: string; currency: string; reference: string };

const decimal = (value: Json | undefined): string => toText(fromNumber(typeof value === 'number' ? value : 0));
const ZERO = parseDecimal('0');

/**
 * The optimization's orders (ISIN → {shares, expected_share_price, expected_transaction_cost}, and for another currency
 * {currency, expected_share_price_in_currency, fx_rate}) as lines, by ISIN, without zero orders. `fxCostBps` is the
 * policy's, booked on what the execution converts.
 */
export function orderLines(orders: Doc, fxCostBps = 0): OrderLine[] {
  return Object.entries(orders)
    .map(([isin, order]): OrderLine => {
      const o = (order ?? {}) as Doc;
      const line = { isin, shares: decimal(o.shares), price: decimal(o.expected_share_price), cost: decimal(o.expected_transaction_cost) };
      if (typeof o.currency !== 'string') return line;
      return {
        ...line,
        currency: o.currency,
        price_in_currency: decimal(o.expected_share_price_in_currency),
        fx_rate: decimal(o.fx_rate),
        fx_cost_bps: decimal(fxCostBps),
      };
    })
    .filter((line) => !parseDecimal(line.shares).isZero())
    .sort((a, b) => (a.isin < b.isin ? -1 : a.isin > b.isin ? 1 : 0));
}

/** Whether any order is of an instrument priced in another currency than the base currency. */
export const convertsCurrencies = (lines: OrderLine[]): boolean => lines.some((l) => l.currency !== undefined);

/** The fills the broker would answer if every order filled as placed, at its price in its own currency. */
export const filledAsOrdered = (lines: OrderLine[], base: string): Fill[] =>
  lines.map((l) => ({ isin: l.isin, shares: l.shares, price: l.price_in_currency ?? l.price, currency: l.currency ?? base, reference: '' }));

/**
 * The cash an execution moves, by cash key, and the conversions it books. The base currency pays the base-currency
 * fills, every transaction cost and the conversions with their costs; each other currency pays its fills and receives
 * its conversion. `held` is the cash of each other currency before the fills (its buys draw on it first).
 */
export function cashMoves(
  base: string,
  lines: OrderLine[],
  fills: Fill[],
  held: (currency: string) => Money,
): { moves: Map<string, Money>; conversions: Conversion[] } {
  const cost = new Map(lines.map((l) => [l.isin, parseDecimal(l.cost)]));
  const foreign = new Set(lines.filter((l) => l.currency !== undefined).map((l) => l.isin));
  const tradedInBase = sum(fills.filter((f) => !foreign.has(f.isin)).map((f) => parseDecimal(f.shares).times(parseDecimal(f.price))));
  const costs = sum(fills.map((f) => cost.get(f.isin) ?? ZERO));
  const conversions = conversionsOf(lines, fills, held);
  const moves = new Map<string, Money>([[base, tradedInBase.plus(costs).plus(conversionsBaseCost(conversions)).negated()]]);
  for (const [currency, traded] of tradedByCurrency(lines, fills)) moves.set(currency, traded.negated());
  for (const c of conversions) moves.set(c.currency, moves.get(c.currency)!.plus(c.amount));
  return { moves, conversions };
}

/** The base-currency cash an execution moves when no other currency is held: −Σ shares × price − Σ costs of the filled ISINs, conversions and their costs. */
export function cashDelta(lines: OrderLine[], fills: Fill[]): Money {
  // Any key no other currency can have names the base currency's move: the callers' lines name only other currencies.
  const base = '';
  return cashMoves(base, lines, fills, () => ZERO).moves.get(base)!;
}

/**
 * The holdings after the fills: each ISIN's quantity moved by its filled shares, the cash of each currency by
 * cashMoves (the base currency's key `currency`, always written). A position that reaches exactly 0 is removed
 * (holdings list what is held); a cash key stays, at 0 too.
 */
export function holdingsAfterFills(doc: Doc, currency: string, lines: OrderLine[], fills: Fill[]): Doc {
  const holdings: Doc = { ...((doc.portfolio ?? {}) as Doc) };
  for (const fill of fills) {
    const before = holdings[fill.isin];
    const quantity = fromNumber(typeof before === 'number' ? before : 0).plus(parseDecimal(fill.shares));
    if (quantity.isZero()) delete holdings[fill.isin];
    else holdings[fill.isin] = quantity.toNumber();
  }
  const { moves } = cashMoves(currency, lines, fills, (k) => cashOf(doc, k));
  for (const [k, move] of moves) holdings[cashKey(k)] = cashOf(doc, k).plus(move).toNumber();
  return holdings;
}

/** The fields an optimization's next version stores about its execution. */
export const executionFields = (status: 'PENDING' | 'EXECUTED' | 'REFUSED', detail: string | null = null): Doc => ({
  execution_status: status,
  execution_detail: detail,
});

/**
 * The broker's fills checked against the orders: one at most per ordered ISIN, decimal shares with the order's sign and
 * no more than ordered, a decimal price in the order's currency (`base` for a base-currency order). Zero fills are
 * dropped. Throws on anything else (a broker error, never booked).
 */
export function checkFills(lines: OrderLine[], fills: Fill[], base: string): Fill[] {
  const ordered = new Map(lines.map((l) => [l.isin, l]));
  const seen = new Set<string>();
  const out: Fill[] = [];
  for (const fill of fills) {
    const line = ordered.get(fill.isin);
    if (!line) throw new Error(`the broker filled ${fill.isin}, which was not ordered`);
    if (seen.has(fill.isin)) throw new Error(`the broker filled ${fill.isin} twice`);
    seen.add(fill.isin);
    const wanted = parseDecimal(line.shares);
    const shares = parseDecimal(fill.shares);
    if (parseDecimal(fill.price).isNegative()) throw new Error(`the broker filled ${fill.isin} at the negative price ${fill.price}`);
    const currency = line.currency ?? base;
    if (fill.currency !== currency) throw new Error(`the broker filled ${fill.isin} in ${fill.currency}; it is priced in ${currency}`);
    if (shares.isZero()) continue;
    if (shares.isNegative() !== wanted.isNegative() || shares.abs().gt(wanted.abs()))
      throw new Error(`the broker filled ${fill.shares} shares of ${fill.isin}; ${toText(wanted)} were ordered`);
    out.push(fill);
  }
  return out;
}
