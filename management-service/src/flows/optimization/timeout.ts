import type { Knex } from 'knex';
import { ended, unansweredDetail } from '../../domain/optimization-gate.ts';
import { attemptsOf, findOptimization, lockPortfolios, lockWaitingRequest, markTimedOut, updateOptimizations } from '../../store/optimizations.ts';
import { askAgainOrClose, type ResultOutcome } from './attempts.ts';
import { optimizationVersion } from './rows.ts';

export type TimeoutLimits = { timeoutMs: number; maxAttempts: number };

/**
 * A request that waited longer than the time-out (docs/adr/0021-optimizations.md): it is given up (its result may
 * still arrive and be used) and the optimization is asked again as a new attempt, or, after `maxAttempts` unanswered
 * ones, ends as FAILURE saying the optimizer did not answer (which reopens the gate).
 */
export async function handleOverdueRequest(
  trx: Knex.Transaction,
  tenantId: string,
  requestId: string,
  limits: TimeoutLimits,
  now: string,
): Promise<ResultOutcome> {
  const request = await lockWaitingRequest(trx, tenantId, requestId);
  if (!request) return 'NOT_WAITING';
  await markTimedOut(trx, tenantId, requestId, now);
  const [portfolio] = await lockPortfolios(trx, tenantId, [request.portfolio_id]);
  const optimization = await findOptimization(trx, tenantId, request.optimization_id, { forUpdate: true });
  if (!portfolio || !optimization || optimization.doc.status !== 'PENDING') return 'NOT_WAITING';
  const { timedOut } = await attemptsOf(trx, tenantId, optimization.id);
  if (timedOut >= limits.maxAttempts) {
    const failed = ended(optimization.doc, 'FAILURE', unansweredDetail(timedOut, limits.timeoutMs));
    await updateOptimizations(trx, tenantId, [optimizationVersion(optimization, failed, portfolio, now, null)]);
    return 'FAILED';
  }
  return askAgainOrClose(trx, portfolio, optimization, request, now);
}
