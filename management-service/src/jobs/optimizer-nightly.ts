import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import { nightlyDayDue } from '../domain/optimization-gate.ts';
import { REQUEST_BATCH, requestOptimizations } from '../flows/optimization/request.ts';
import { listTenants } from '../store/credentials.ts';
import { activeRoboPortfolios, nightlyRunDone, recordNightlyRun, tryNightlyLock } from '../store/optimizations.ts';
import { inTenant } from '../store/tenant-scope.ts';
import { startTimedLoop } from './timed-loop.ts';

export type NightlyOptions = { db: Knex; logger: Logger; at: string; batch?: number; everyMs?: number; now?: () => Date };

export type NightlyRun = { day: string; tenants: number; portfolios: number; requested: number; ms: number };

/**
 * Runs the nightly batch of `now`'s UTC day if it is due and no replica ran it yet (docs/adr/0021-optimizations.md):
 * the ACTIVE robo-advised portfolios of every enabled tenant are asked for through the gate (reason SCHEDULED), a
 * batch of portfolios per transaction. The advisory lock lets one replica run it; the day's row, written in the
 * transaction that holds the lock, tells every later attempt (a second replica, a restart) that it ran. A run cut off
 * by a crash leaves no row and is run again; the portfolios it reached then have PENDING optimizations and are skipped.
 */
export async function runNightlyIfDue(options: NightlyOptions): Promise<NightlyRun | undefined> {
  const { db } = options;
  const now = (options.now ?? (() => new Date()))();
  const day = nightlyDayDue(options.at, now);
  if (day === undefined) return undefined;
  const batch = options.batch ?? REQUEST_BATCH;
  return db.transaction(async (lock) => {
    if (!(await tryNightlyLock(lock)) || (await nightlyRunDone(lock, day))) return undefined;
    const started = Date.now();
    const requestedAt = now.toISOString();
    const tenants = (await listTenants(db)).filter((t) => t.disabled_at === null);
    let portfolios = 0;
    let requested = 0;
    for (const tenant of tenants) {
      let after = '';
      for (;;) {
        const ids = await inTenant(db, tenant.id, async (trx) => {
          const page = await activeRoboPortfolios(trx, tenant.id, after, batch);
          requested += (await requestOptimizations(trx, tenant.id, page, 'SCHEDULED', requestedAt)).length;
          return page;
        });
        portfolios += ids.length;
        if (ids.length < batch) break;
        after = ids[ids.length - 1]!;
      }
    }
    await recordNightlyRun(lock, { day, started_at: requestedAt, finished_at: new Date().toISOString(), tenants: tenants.length, portfolios, requested });
    return { day, tenants: tenants.length, portfolios, requested, ms: Date.now() - started };
  });
}

/** Checks every `everyMs` (default a minute) whether the nightly batch is due, and runs it (see runNightlyIfDue). */
export function startOptimizerNightly(options: NightlyOptions): { stop: () => Promise<void> } {
  const { logger } = options;
  return startTimedLoop({
    name: 'nightly optimizations',
    everyMs: options.everyMs ?? 60_000,
    logger,
    step: async () => {
      const run = await runNightlyIfDue(options);
      if (run) logger.info('nightly optimizations requested', run);
      return false;
    },
  });
}
