import { fromNumber, parseDecimal, toText, type Money } from '@platform/shared';
import { serviceExecutes } from './broker-role.ts';
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
 * The PATCH an executed withdrawal booked by the service makes: cash lowered and the requested divest_amount lowered
 * by what was paid (a request of everything is done). A withdrawal reported by the Client Middleware must be covered
 * by the cash not `held` for what is with the broker (`mustCover`); one the broker has already executed for the service
 * is booked as the broker moved it (its own amount was held, so the cash covers it).
 */
export function withdrawalPatch(doc: Doc, amount: Money, options: { mustCover?: boolean; held?: Money } = {}): Doc {
  const currency = String(doc.base_currency);
  const cash = cashOf(doc, currency);
  const free = options.held ? cash.minus(options.held) : cash;
  if ((options.mustCover ?? true) && free.lt(amount)) {
    const held = options.held && !options.held.isZero() ? ` (${toText(options.held)} of it held for what is with the broker)` : '';
    throw new StateConflict(`The portfolio holds ${toText(cash)} ${currency} in cash${held}, less than the ${toText(amount)} withdrawn.`);
  }
  const patch: Doc = { portfolio: holdingsWithCash(doc, currency, amount.negated()) };
  const divest = settings(doc).divest_amount;
  if (isRobo(doc) && typeof divest === 'number' && divest > 0) {
    const rest = divest >= DIVEST_EVERYTHING ? 0 : Math.max(0, fromNumber(divest).minus(amount).toNumber());
    patch.config = { manager_settings: { divest_amount: rest } };
  }
  return patch;
}

/** What sets off the service's withdrawal of a robo-advised portfolio's divest_amount. */
export type WithdrawalTrigger = 'DIVEST_AMOUNT' | 'EXECUTION';

/** Whether the holdings are cash only (no position other than a `$CCY` key). */
const cashOnly = (doc: Doc) => Object.entries((doc.portfolio ?? {}) as Doc).every(([key, quantity]) => key.startsWith('$') || quantity === 0);

/**
 * The cash move the service queues to pay out a robo-advised portfolio's divest_amount (docs/adr/0022-execution-and-withdrawals.md),
 * or undefined. Only where the service deals with the broker (every PAPER_MONEY portfolio, REAL_MONEY ones with
 * SERVICE integration), with divest_amount pending and no other withdrawal in
 * flight. When divest_amount is set (DIVEST_AMOUNT) it goes out only if the cash already covers it (everything, 1e100:
 * the holdings are all cash), else the optimizer frees the cash first; after an execution (EXECUTION) whatever cash
 * there is pays it: min(divest_amount, cash), all the cash for everything. Cash `held` by orders still with the broker
 * does not count.
 */
export function roboWithdrawalAmount(
  doc: Doc,
  brokerIntegration: 'CLIENT' | 'SERVICE',
  trigger: WithdrawalTrigger,
  inFlight: { withdrawal: boolean; execution: boolean },
  held: Money = fromNumber(0),
): Money | undefined {
  if (!serviceExecutes(brokerIntegration, doc) || !isRobo(doc) || inFlight.withdrawal) return undefined;
  // An execution in flight changes the cash; its settlement looks again.
  if (trigger === 'DIVEST_AMOUNT' && inFlight.execution) return undefined;
  const divest = settings(doc).divest_amount;
  if (typeof divest !== 'number' || divest <= 0) return undefined;
  const cash = cashOf(doc, String(doc.base_currency)).minus(held);
  if (cash.lte(0)) return undefined;
  const everything = divest >= DIVEST_EVERYTHING;
  if (trigger === 'DIVEST_AMOUNT' && !(everything ? cashOnly(doc) : cash.gte(fromNumber(divest)))) return undefined;
  return everything || cash.lt(fromNumber(divest)) ? cash : fromNumber(divest);
}

/** A customer's or the machine client's request to withdraw from a USER_MANAGED portfolio (POST /portfolios/{id}/withdrawals/). */
export function checkWithdrawalRequest(
  doc: Doc,
  brokerIntegration: 'CLIENT' | 'SERVICE',
  amount: string,
  currency: string,
  withdrawalInFlight: boolean,
  held: Money = fromNumber(0),
): Money {
  if (doc.config === undefined || (doc.config as Doc).manager !== 'USER_MANAGED' || doc.money_type !== 'REAL_MONEY' || brokerIntegration !== 'SERVICE') {
    throw new StateConflict(
      'The service pays out withdrawals it is asked for only from USER_MANAGED REAL_MONEY portfolios of tenants with SERVICE broker integration; ' +
        'a robo-advised portfolio withdraws through divest_amount, and with CLIENT integration the Client Middleware pays out and reports it (POST /events/withdraw/).',
    );
  }
  if (doc.archived === true) throw new StateConflict('The portfolio is archived; it pays out nothing.');
  if (doc.status !== 'ACTIVE') throw new StateConflict(`The portfolio is ${String(doc.status)}; withdrawals need it ACTIVE.`);
  if (currency !== doc.base_currency)
    throw new StateConflict(`A withdrawal is paid in the portfolio's base currency ${String(doc.base_currency)}, not ${currency}.`);
  if (withdrawalInFlight) throw new StateConflict('A withdrawal of this portfolio is still with the broker; ask again once it is settled.');
  const money = parseDecimal(amount);
  if (money.lte(0)) throw new InvalidField(['body', 'amount'], 'must be a positive amount');
  const cash = cashOf(doc, currency).minus(held);
  if (cash.lt(money))
    throw new StateConflict(`The portfolio holds ${toText(cash)} ${currency} of cash free to pay out, less than the ${toText(money)} asked for.`);
  return money;
}
