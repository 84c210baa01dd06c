import type { Knex } from 'knex';
import { optimizationStatusUpdate } from '../../domain/events.ts';
import { isDiscretionary, unoptimizable, withResult, type ResultFields } from '../../domain/optimization-gate.ts';
import { inputsDigest, optimizerInputs } from '../../domain/optimization-request.ts';
import { findOptimization, lockPortfolios, lockRequest, markAnswered, updateOptimizations } from '../../store/optimizations.ts';
import { insertEvents } from '../../store/outbox.ts';
import type { TenantSettings } from '../../store/tenant-scope.ts';
import { queueExecution } from '../execution.ts';
import { askAgainOrClose, type ResultOutcome } from './attempts.ts';
import { optimizationVersion, policyOf, ref } from './rows.ts';

/** The optimizer's answer to one request (contracts/events.asyncapi.yaml OptimizerResult). */
export type OptimizerResult = ResultFields & { request_id: string; tenant_id: string; portfolio_id: string; optimization_id: string };

/**
 * Stores an optimizer result (docs/adr/0021-optimizations.md), at most once per request: an unknown or already
 * answered request changes nothing; an optimization no longer PENDING records the late result only; a portfolio whose
 * inputs changed since the request is asked again instead. Otherwise the optimization's next version holds the result,
 * SUCCESS emits optimizations.status-update, and a recommended SUCCESS of a discretionary portfolio goes to execution
 * (its fields in the same version). The portfolio is locked before its optimization, as by every writer of them.
 */
export async function storeResult(trx: Knex.Transaction, tenant: TenantSettings, result: OptimizerResult, now: string): Promise<ResultOutcome> {
  const tenantId = result.tenant_id;
  const request = await lockRequest(trx, tenantId, result.request_id);
  if (!request) return 'UNKNOWN_REQUEST';
  if (request.result_at) return 'ALREADY_ANSWERED';
  if (request.optimization_id !== result.optimization_id || request.portfolio_id !== result.portfolio_id) return 'MISMATCH';
  const answered = (outcome: 'STORED' | 'LATE' | 'STALE') =>
    markAnswered(trx, tenantId, request.request_id, { result_at: now, result_status: result.status, outcome });
  const [portfolio] = await lockPortfolios(trx, tenantId, [request.portfolio_id]);
  const optimization = await findOptimization(trx, tenantId, request.optimization_id, { forUpdate: true });
  if (!portfolio || !optimization || optimization.doc.status !== 'PENDING') {
    await answered('LATE');
    return 'LATE';
  }
  const policy = await policyOf(trx, portfolio);
  if (!policy || unoptimizable(portfolio, policy) || inputsDigest(optimizerInputs(portfolio.doc), policy) !== request.inputs_digest) {
    await answered('STALE');
    return askAgainOrClose(trx, portfolio, optimization, request, now);
  }
  let doc = withResult(optimization.doc, result);
  if (doc.status === 'SUCCESS' && doc.is_recommended === true && isDiscretionary(portfolio.doc)) {
    doc = { ...doc, ...(await queueExecution(trx, tenant, portfolio, { id: optimization.id, doc }, now)) };
  }
  const next = optimizationVersion(optimization, doc, portfolio, now, null);
  await updateOptimizations(trx, tenantId, [next]);
  // Event version 1.0.0 knows only SUCCESS (contracts/events.asyncapi.yaml); the other outcomes are logged by the caller.
  if (doc.status === 'SUCCESS')
    await insertEvents(trx, tenantId, [optimizationStatusUpdate({ ...ref(next), is_recommended: doc.is_recommended === true, status: 'SUCCESS' }, now)]);
  await answered('STORED');
  return 'STORED';
}
