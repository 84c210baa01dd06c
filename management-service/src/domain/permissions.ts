import type { Principal } from './principal.ts';
import { NotPermitted } from './errors.ts';

type Access = { readable_by: string[]; modifiable_by: string[] };

/** Machine clients read everything of their tenant; an end user what `readable_by` names. */
export const canRead = (principal: Principal, entity: Access): boolean => principal.kind === 'machine' || entity.readable_by.includes(principal.subject);

export const canModify = (principal: Principal, entity: Access): boolean => principal.kind === 'machine' || entity.modifiable_by.includes(principal.subject);

export function mustModify(principal: Principal, entity: Access, label: string): void {
  if (!canModify(principal, entity)) throw new NotPermitted(`You may not modify this ${label}.`);
}

/** Creating entities and administrative fields (archived) are for the tenant's machine clients. */
export function mustBeMachine(principal: Principal, what: string): void {
  if (principal.kind !== 'machine') throw new NotPermitted(`Only the tenant's machine clients may ${what}.`);
}

/**
 * Asking the service to pay out cash (POST /portfolios/{portfolio_id}/withdrawals/) is the one write a customer may
 * start although every other create is the machine client's (docs/adr/0001-customer-rights.md): the machine client
 * and the portfolio's owner may; a customer who cannot read the portfolio is refused as for the portfolio itself.
 */
export function mustRequestWithdrawal(principal: Principal, portfolio: Access & { doc: { owned_by_user_id?: unknown } }): void {
  if (principal.kind === 'machine') return;
  if (!canRead(principal, portfolio)) throw new NotPermitted('You may not read this portfolio.');
  if (portfolio.doc.owned_by_user_id !== principal.subject) throw new NotPermitted("Only the portfolio's owner may ask for a withdrawal from it.");
}
