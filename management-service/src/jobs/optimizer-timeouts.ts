import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import { handleOverdueRequest, type TimeoutLimits } from '../flows/optimization/timeout.ts';
import { overdueRequests, tryTimeoutLock } from '../store/optimizations.ts';
import { inTenant } from '../store/tenant-scope.ts';
import { startTimedLoop } from './timed-loop.ts';

export type OptimizerTimeoutOptions = TimeoutLimits & { db: Knex; logger: Logger; batch?: number; everyMs?: number; now?: () => Date };

/**
 * No optimization stays PENDING for ever (docs/adr/0021-optimizations.md): a request without a result after
 * `timeoutMs` is sent again as a new attempt, and after `maxAttempts` unanswered ones the optimization ends as
 * FAILURE. One replica at a time (an advisory lock); each request in its own tenant transaction.
 */
export function startOptimizerTimeouts(options: OptimizerTimeoutOptions): { stop: () => Promise<void> } {
  const { db, logger } = options;
  const batch = options.batch ?? 100;
  const now = options.now ?? (() => new Date());
  const limits: TimeoutLimits = { timeoutMs: options.timeoutMs, maxAttempts: options.maxAttempts };

  const step = () =>
    db.transaction(async (lock) => {
      if (!(await tryTimeoutLock(lock))) return false;
      const due = await overdueRequests(lock, new Date(now().getTime() - limits.timeoutMs), batch);
      for (const { tenant_id: tenant, request_id: request } of due) {
        const outcome = await inTenant(db, tenant, (trx) => handleOverdueRequest(trx, tenant, request, limits, now().toISOString()));
        if (outcome === 'FAILED') logger.warn('optimization failed: the optimizer did not answer', { tenant, request, attempts: limits.maxAttempts });
        else if (outcome !== 'NOT_WAITING') logger.info('optimizer request timed out', { tenant, request, outcome });
      }
      return due.length === batch;
    });

  return startTimedLoop({ name: 'optimizer time-outs', everyMs: options.everyMs ?? Math.min(5_000, Math.max(100, limits.timeoutMs / 4)), logger, step });
}
