import { StateConflict } from './errors.ts';
import type { Doc } from './merge.ts';

/**
 * Erasure of a user's personal data (docs/adr/0059-personal-data-erasure.md), pure: which fields
 * are personal, what an erased user's document is, and when a user may be erased.
 */

/**
 * The fields of a user document that identify a person: names, contact, the bank account, and the
 * person's ids at the broker and the identity provider. `external_id` stays: it is the client's own
 * pseudonym of the user, the key by which the Client Middleware erases on its side.
 */
export const PERSONAL_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'counter_account', 'brokerage_user_id', 'idp_user_id'] as const;

/** The document's personal fields set to null: what every stored version of an erased user becomes. */
export const REDACTED: Doc = Object.fromEntries(PERSONAL_FIELDS.map((field) => [field, null]));

/** The erased user's last version: its personal fields null, inactive, and when it was erased. */
export const erasedUser = (current: Doc, now: string): Doc => ({ ...current, ...REDACTED, status: 'INACTIVE', erased_at: now });

/** An owned portfolio as the erasure checks it: its document and the transactions still under way. */
export type OwnedPortfolio = { id: string; doc: Doc; deleted: boolean; openTransactions: number };

/** Transaction states of money or orders still moving (an execution, a deposit or a payout under way). */
export const OPEN_TRANSACTION_STATES = ['PLANNED', 'PENDING', 'PLACED', 'EXECUTED'] as const;

/** Why a portfolio is not closed, or undefined when it is: deleted, or holding nothing with nothing under way. */
export function openReason(portfolio: OwnedPortfolio): string | undefined {
  if (portfolio.deleted) return undefined;
  const held = Object.entries((portfolio.doc.portfolio as Doc | undefined) ?? {}).filter(([, units]) => Number(units) !== 0);
  if (held.length > 0) return `holds ${held.map(([key]) => key).join(', ')}`;
  const divest = Number(((portfolio.doc.config as Doc | undefined)?.manager_settings as Doc | undefined)?.divest_amount ?? 0);
  if (divest > 0) return 'has a pending withdrawal';
  if (portfolio.openTransactions > 0) return `has ${portfolio.openTransactions} transaction(s) under way`;
  return undefined;
}

/** Refuses the erasure while any owned portfolio is open, naming each and why. */
export function mustBeErasable(portfolios: readonly OwnedPortfolio[]): void {
  const open = portfolios.flatMap((p) => {
    const reason = openReason(p);
    return reason ? [`${p.id} ${reason}`] : [];
  });
  if (open.length > 0) {
    throw new StateConflict(
      `The user owns portfolios that are not closed (${open.join('; ')}): a user is erased once every portfolio is emptied, with no withdrawal or transaction under way, or deleted.`,
    );
  }
}
