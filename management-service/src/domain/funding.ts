import { fromNumber, parseDecimal, toText, type Money } from '@platform/shared';
import { InvalidField, StateConflict } from './errors.ts';
import type { Doc } from './merge.ts';
import { ROBO_MANAGERS } from './portfolio-status.ts';

/** divest_amount at or above this means "everything" (the interface's 1e100). */
export const DIVEST_EVERYTHING = 1e100;

export const cashKey = (currency: string) => `$${currency}`;
export const isRobo = (doc: Doc) => ROBO_MANAGERS.has(String((doc.config as Doc).manager));
const settings = (doc: Doc) => ((doc.config as Doc).manager_settings ?? {}) as Doc;

/** The cash of the portfolio in `currency`, exactly as stored. */
export function cashOf(doc: Doc, currency: string): Money {
  const value = ((doc.portfolio ?? {}) as Doc)[cashKey(currency)];
  return fromNumber(typeof value === 'number' ? value : 0);
}

/** The amount of an inbound event: a positive decimal in the portfolio's base currency. */
export function checkCashEvent(portfolio: Doc, amount: string, currency: string): Money {
  if (currency !== portfolio.base_currency) {
    throw new InvalidField(['body', 'data', 'currency'], `must be the portfolio's base currency ${String(portfolio.base_currency)}`);
  }
  if (portfolio.money_type !== 'REAL_MONEY') throw new StateConflict('Cash events apply to REAL_MONEY portfolios only; this one is PAPER_MONEY.');
  return parseDecimal(amount);
}

/** docs/adr/0009-funding-modes.md: a deposit needs an ACTIVE or WAITING_FOR_FUNDS, unarchived, real-money portfolio. */
export function checkDepositTarget(portfolio: Doc, amount: string, currency: string): Money {
  if (portfolio.archived === true) throw new StateConflict('The portfolio is archived; it takes no deposits.');
  const money = checkCashEvent(portfolio, amount, currency);
  if (portfolio.status !== 'ACTIVE' && portfolio.status !== 'WAITING_FOR_FUNDS') {
    throw new StateConflict(`The portfolio is ${String(portfolio.status)}; deposits need ACTIVE or WAITING_FOR_FUNDS.`);
  }
  return money;
}

/** Holdings with the cash of `currency` moved by `delta`, summed exactly and kept as a JSON number. */
export function holdingsWithCash(doc: Doc, currency: string, delta: Money): Doc {
  const cash = cashOf(doc, currency).plus(delta);
  return { ...((doc.portfolio ?? {}) as Doc), [cashKey(currency)]: cash.toNumber() };
}

/**
 * The PATCH a settled deposit makes to its portfolio: the new cash and, at the first funding that
 * reaches the policy's minimum funding amount (no policy: any amount), funded_since.
 */
export function depositPatch(doc: Doc, amount: Money, minimumFunding: string | undefined, now: string): Doc {
  const portfolio = holdingsWithCash(doc, String(doc.base_currency), amount);
  const patch: Doc = { portfolio };
  const cash = fromNumber(portfolio[cashKey(String(doc.base_currency))] as number);
  if (doc.funded_since === null && cash.gte(parseDecimal(minimumFunding ?? '0'))) patch.funded_since = now;
  return patch;
}

/**
 * The PATCH an executed withdrawal booked by the service makes: cash lowered (it must cover the
 * amount) and the requested divest_amount lowered by what was paid (a request of everything is done).
 */
export function withdrawalPatch(doc: Doc, amount: Money): Doc {
  const currency = String(doc.base_currency);
  const cash = cashOf(doc, currency);
  if (cash.lt(amount)) throw new StateConflict(`The portfolio holds ${toText(cash)} ${currency} in cash, less than the ${toText(amount)} withdrawn.`);
  const patch: Doc = { portfolio: holdingsWithCash(doc, currency, amount.negated()) };
  const divest = settings(doc).divest_amount;
  if (isRobo(doc) && typeof divest === 'number' && divest > 0) {
    const rest = divest >= DIVEST_EVERYTHING ? 0 : Math.max(0, fromNumber(divest).minus(amount).toNumber());
    patch.config = { manager_settings: { divest_amount: rest } };
  }
  return patch;
}
