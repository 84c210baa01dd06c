import type { Knex } from 'knex';
import { CURRENT_COLUMNS, type EntityRow } from './entities.ts';

/** Any number that all replicas agree on: the lock that lets one replica at a time expire assessments. */
const EXPIRY_LOCK = 270_027;

/** Takes the assessment expiry's lock for the caller's transaction; false when another replica holds it. */
export async function tryAssessmentExpiryLock(trx: Knex.Transaction): Promise<boolean> {
  const { rows } = await trx.raw('select pg_try_advisory_xact_lock(?) as mine', [EXPIRY_LOCK]);
  return rows[0].mine === true;
}

/**
 * Ids of the tenant's suitability profiles with an ACCEPTED assessment whose validity ended by `now` (an ISO time as
 * the service writes it), after `afterId`; through the index of migrations/014_assessment_expiry_index.sql.
 */
export async function profilesWithDueAssessments(trx: Knex.Transaction, tenantId: string, now: string, afterId: string, limit: number): Promise<string[]> {
  const rows = (await trx('entities')
    .select('id')
    .where({ tenant_id: tenantId, type: 'suitability-profiles', deleted: false })
    .whereRaw('assessment_next_expiry(doc) is not null and assessment_next_expiry(doc) <= ?', [now])
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)) as { id: string }[];
  return rows.map((r) => r.id);
}

/** The tenant's undeleted risk profiles (their scores are the assessment's score bands, docs/adr/0027-assessments.md). */
export async function liveRiskProfiles(trx: Knex.Transaction, tenantId: string): Promise<EntityRow[]> {
  return (await trx('entities').select(CURRENT_COLUMNS).where({ tenant_id: tenantId, type: 'risk-profiles', deleted: false }).orderBy('id')) as EntityRow[];
}
