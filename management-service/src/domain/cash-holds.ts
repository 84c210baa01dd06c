import { fromNumber, parseDecimal, sum, toText, type Money } from '@platform/shared';
import { StateConflict } from './errors.ts';
import { conversionsOf } from './conversions.ts';
import { cashDelta, filledAsOrdered, type OrderLine } from './execution.ts';
import { DIVEST_EVERYTHING, cashOf } from './funding.ts';
import type { Doc } from './merge.ts';

/**
 * Cash held for what is with the broker (docs/adr/0022-execution-and-withdrawals.md), pure. An open payout holds its
 * amount from the moment it is queued, sent orders what they cost if they all fill, until they settle, so no other
 * write can spend that cash and their settlement never takes the cash below zero.
 */

/** An instruction not settled yet, as it moves the cash; `sent` once handed to the broker. */
export type OpenInstruction = { kind: 'DEPOSIT' | 'ORDERS' | 'WITHDRAWAL'; amount: string | null; orders: OrderLine[] | null; sent: boolean };

const ZERO = parseDecimal('0');

/**
 * What orders take from the cash of the base currency when they all fill: the buys and every cost, less the sells;
 * never below 0. Orders of another currency count as if none of its cash were held: their buys converted in full, with
 * the conversion's cost. That is the most they can take (cash held in the currency only lowers what is converted), so
 * the hold still covers them when that cash is spent meanwhile.
 */
export function ordersNeed(lines: OrderLine[]): Money {
  const need = cashDelta(lines, filledAsOrdered(lines, '')).negated();
  return need.isNegative() ? ZERO : need;
}

/** What orders would convert into other currencies, valued in the base currency with the cost, none of their cash held. */
const toConvert = (lines: OrderLine[]): Money =>
  sum(
    conversionsOf(lines, filledAsOrdered(lines, ''), () => ZERO)
      .filter((c) => c.amount.isPositive())
      .map((c) => c.baseAmount.plus(c.cost)),
  );

/**
 * The cash the open instructions hold: a payout its amount from when it is queued (the cash was checked then), orders
 * their need from when they are sent (checked then: queued orders may not take what an earlier payout holds), deposits
 * nothing (they bring cash).
 */
export function heldCash(open: OpenInstruction[]): Money {
  return sum(
    open.map((i) => {
      if (i.kind === 'WITHDRAWAL') return parseDecimal(i.amount ?? '0');
      if (i.kind === 'ORDERS' && i.sent) return ordersNeed(i.orders ?? []);
      return ZERO;
    }),
  );
}

/** The cash of the portfolio's base currency that is not held. */
export const availableCash = (doc: Doc, held: Money): Money => cashOf(doc, String(doc.base_currency)).minus(held);

/** Whether a write of the portfolio lowers the cash of its base currency (only then is what is held looked up). */
export function lowersCash(before: Doc, after: Doc): boolean {
  const currency = String(after.base_currency);
  return cashOf(after, currency).lt(cashOf(before, currency));
}

/**
 * A client's write of the holdings may not take the cash below what is held: the broker may already have moved it.
 * Raising the cash, or lowering it while no more than the rest is held, is the client's to do.
 */
export function checkHeldCash(before: Doc, after: Doc, held: Money): void {
  const currency = String(after.base_currency);
  const cash = cashOf(after, currency);
  if (held.isZero() || !lowersCash(before, after) || cash.gte(held)) return;
  throw new StateConflict(
    `${toText(held)} ${currency} of the cash is with the broker (a payout or orders not settled yet); the cash cannot go below it, ${toText(cash)} was given.`,
  );
}

/**
 * The amount a robo-advised portfolio's payout is sent with, the first time it is handed to the broker: what was
 * queued, but no more than the divest_amount in force then (lowered meanwhile, it pays less; 0 drops the payout) nor
 * the cash not held by other instructions. Zero or less: nothing is sent.
 */
export function payoutToSend(doc: Doc, queued: Money, heldByOthers: Money): Money {
  const divest = ((doc.config as Doc).manager_settings as Doc | undefined)?.divest_amount;
  let amount = queued;
  if (typeof divest !== 'number' || divest <= 0) return ZERO;
  if (divest < DIVEST_EVERYTHING && fromNumber(divest).lt(amount)) amount = fromNumber(divest);
  const available = availableCash(doc, heldByOthers);
  return available.lt(amount) ? available : amount;
}

/**
 * Whether orders may be sent: what they need when all filled must be there, out of the cash not held by other
 * instructions. Returns the reason when not (the execution is refused and nothing sent), undefined when they may go.
 */
export function ordersNotCovered(doc: Doc, lines: OrderLine[], heldByOthers: Money): string | undefined {
  const need = ordersNeed(lines);
  const available = availableCash(doc, heldByOthers);
  if (need.isZero() || available.gte(need)) return undefined;
  const currency = String(doc.base_currency);
  const converted = toConvert(lines);
  const conversion = converted.isZero() ? '' : ` (${toText(converted)} ${currency} of it converted into other currencies, with the cost)`;
  return `the orders need ${toText(need)} ${currency}${conversion} and ${toText(available.isNegative() ? ZERO : available)} ${currency} of the cash is available`;
}
