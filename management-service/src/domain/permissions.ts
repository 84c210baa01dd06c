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
