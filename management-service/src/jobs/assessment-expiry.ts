import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import { expireProfile } from '../flows/assessments.ts';
import { listTenants } from '../store/credentials.ts';
import { profilesWithDueAssessments, tryAssessmentExpiryLock } from '../store/assessments.ts';
import { inTenant } from '../store/tenant-scope.ts';
import { startTimedLoop } from './timed-loop.ts';

export type AssessmentExpiryOptions = { db: Knex; logger: Logger; batch?: number; everyMs?: number; now?: () => Date };

/**
 * One round of the expiry (docs/adr/0027-assessments.md): ACCEPTED assessments whose validity ended become EXPIRED,
 * in every tenant, a page of profiles per tenant transaction. One replica at a time (an advisory lock held for the
 * round); answers how many expired, or null when another replica holds the lock.
 */
export function expireAssessments(options: AssessmentExpiryOptions): Promise<number | null> {
  const { db, logger } = options;
  const batch = options.batch ?? 100;
  const now = (options.now ?? (() => new Date()))().toISOString();
  return db.transaction(async (lock) => {
    if (!(await tryAssessmentExpiryLock(lock))) return null;
    let expired = 0;
    for (const tenant of await listTenants(db)) {
      let after = '';
      for (;;) {
        const page = await inTenant(db, tenant.id, async (trx, settings) => {
          const ids = await profilesWithDueAssessments(trx, tenant.id, now, after, batch);
          for (const id of ids) expired += await expireProfile(trx, settings, tenant.id, id, now);
          return ids;
        });
        if (page.length < batch) break;
        after = page[page.length - 1]!;
      }
    }
    if (expired > 0) logger.info('assessments expired', { expired });
    return expired;
  });
}

/** Runs the expiry every `everyMs` (default a minute). */
export function startAssessmentExpiry(options: AssessmentExpiryOptions): { stop: () => Promise<void> } {
  return startTimedLoop({
    name: 'assessment expiry',
    everyMs: options.everyMs ?? 60_000,
    logger: options.logger,
    step: async () => {
      await expireAssessments(options);
      return false;
    },
  });
}
