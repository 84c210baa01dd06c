import type { Knex } from 'knex';
import type { Doc } from '../../domain/merge.ts';
import { nextVersion, type EntityRow } from '../../store/entities.ts';
import { entitiesOfType } from '../../store/optimizations.ts';

/** What the optimization flows share: the portfolio's settings they read and the optimizations' versions they write. */

/** An id the portfolio's manager settings name, when they name one. */
const settingId =
  (field: string) =>
  (portfolio: EntityRow): string | undefined => {
    const id = ((portfolio.doc.config as Doc | undefined)?.manager_settings as Doc | undefined)?.[field];
    return typeof id === 'string' ? id : undefined;
  };
export const policyIdOf = settingId('policy_id');
export const profileIdOf = settingId('suitability_profile_id');

/** The portfolio's policy, when it names one that exists. */
export async function policyOf(trx: Knex.Transaction, portfolio: EntityRow): Promise<EntityRow | undefined> {
  const id = policyIdOf(portfolio);
  return id === undefined ? undefined : (await entitiesOfType(trx, portfolio.tenant_id, 'policies', [id]))[0];
}

/** The next version of an optimization: readable and modifiable by whoever may read and modify its portfolio now. */
export const optimizationVersion = (current: EntityRow, doc: Doc, portfolio: EntityRow, now: string, author: string | null): EntityRow =>
  nextVersion(current, doc, { now, author, access: portfolio });

/** The optimization as its events name it. */
export const ref = (row: EntityRow) => ({
  id: row.id,
  portfolio_id: String(row.doc.portfolio_id),
  external_id: (row.doc.external_id as string | null) ?? null,
});
