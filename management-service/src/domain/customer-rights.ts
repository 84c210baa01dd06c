import { ownValue } from '@platform/shared';
import type { Principal } from './principal.ts';
import { FieldsNotPermitted, type Loc } from './errors.ts';
import { jsonEqual, type Doc, type Json } from './merge.ts';

/**
 * What a customer (an end user's token) may change on an entity it may modify, by entity type:
 * dotted paths of the stored document. Everything else — holdings and cash, `funded_since`,
 * ownership, brokerage and payout accounts, `active`, `archived`, policy and risk profile,
 * transactions, and every create and delete — belongs to the tenant's machine client or to the
 * service. A type that is not listed here is read-only for customers. See docs/adr/0001-customer-rights.md.
 */
export const CUSTOMER_MAY_CHANGE: Readonly<Record<string, readonly string[]>> = {
  users: ['first_name', 'last_name', 'language'],
  portfolios: [
    'name',
    'config.manager_settings.goal_id',
    'config.manager_settings.horizon_id',
    'config.manager_settings.tags',
    'config.manager_settings.background_image',
    'config.manager_settings.background_color',
    'config.manager_settings.recurring_deposit_amount',
    'config.manager_settings.end_datetime',
    // Robo-advised portfolios only: a USER_MANAGED portfolio carries no divest_amount at all.
    'config.manager_settings.divest_amount',
  ],
  // The owner's choice on an advisory optimization (docs/adr/0021-optimizations.md); every other field is the service's.
  optimizations: ['owner_choice'],
};

const isObject = (v: Json | undefined): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The paths at which `after` differs from `before`, as deep as both sides are objects (null and absent are alike). */
export function changedPaths(before: Json | undefined, after: Json | undefined, path: string[] = []): string[][] {
  if (jsonEqual(before ?? null, after ?? null)) return [];
  if (!isObject(before) || !isObject(after)) return [path];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].flatMap((key) => changedPaths(ownValue(before, key), ownValue(after, key), [...path, key]));
}

const startsWith = (path: readonly string[], prefix: readonly string[]) => prefix.length <= path.length && prefix.every((key, i) => path[i] === key);

/**
 * The fields of a change that are not the customer's, each named by the shortest part of its path
 * that no allowed field lies under (`portfolio` for any change of the holdings).
 */
export function refusedFields(type: string, before: Doc, after: Doc): Loc[] {
  const allowed = (ownValue(CUSTOMER_MAY_CHANGE, type) ?? []).map((p) => p.split('.'));
  const refused = new Map<string, Loc>();
  for (const path of changedPaths(before, after)) {
    if (allowed.some((a) => startsWith(path, a))) continue;
    let depth = 1;
    while (depth < path.length && allowed.some((a) => startsWith(a, path.slice(0, depth)))) depth++;
    const field = path.slice(0, depth);
    refused.set(field.join('.'), ['body', ...field]);
  }
  return [...refused.values()];
}

/** Throws 403 naming every field of the change that a customer may not make; machine clients pass. */
export function mustBeCustomersChange(principal: Principal, type: string, before: Doc, after: Doc): void {
  if (principal.kind !== 'user') return;
  const refused = refusedFields(type, before, after);
  if (refused.length > 0) throw new FieldsNotPermitted(refused);
}
