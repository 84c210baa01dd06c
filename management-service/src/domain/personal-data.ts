import { NotPermitted } from './errors.ts';
import type { Principal } from './principal.ts';

/** The shape of the export document; raised when a section changes meaning or goes away. */
export const EXPORT_FORMAT_VERSION = 1;

/** The entity types kept under a portfolio (their `parent`), and each one's name in the document: each is a part of every exported portfolio. */
export const PORTFOLIO_CHILDREN = [
  { type: 'transactions', name: 'transaction' },
  { type: 'optimizations', name: 'optimization' },
] as const;

/** What each section of the document holds, told in the document itself (docs/adr/0060-personal-data-export.md). */
export const EXPORT_SECTIONS: Record<string, string> = {
  export: 'this header: the format version, the time of the snapshot read, the tenant and the user',
  user: 'the user as GET /users/{user_id} answers it',
  user_versions: 'every version of the user, oldest first, each as GET /users/{user_id}?version=n answers it',
  suitability_profiles: "the user's suitability profiles with their assessments and answers: { profile, versions }",
  portfolios:
    'every portfolio the user owns, deleted ones too: { portfolio, versions, transactions: [{ transaction, versions }], ' +
    'optimizations: [{ optimization, versions, requests }], withdrawals, broker_instructions }',
  'portfolios[].optimizations[].requests': 'each request sent to the optimizer for the optimization and what became of its result, as stored',
  'portfolios[].withdrawals': 'the withdrawals recorded for the portfolio, as POST /events/withdraw/ answered them',
  'portfolios[].broker_instructions': 'the deposits, withdrawals and orders sent (or to be sent) to the broker for the portfolio, as stored',
  events: 'the events clients were sent about the user and all of the above, in the order of GET /events/',
};

/**
 * The tenant's machine clients may export any of its users; a customer only themselves, whatever
 * else they may read (the export is the person's right, not a reader's).
 */
export function mustExport(principal: Principal, userId: string): void {
  if (principal.kind !== 'machine' && principal.subject !== userId) throw new NotPermitted('You may export only your own data.');
}

export const exportFileName = (userId: string): string => `user-${userId}-export.json`;
