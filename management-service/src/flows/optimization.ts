import type { Knex } from 'knex';
import { newId, newUlid, subjects } from '@platform/shared';
import { isRobo } from '../domain/funding.ts';
import type { Doc } from '../domain/merge.ts';
import { optimizerRequest, pendingOptimization, type OptimizationReason } from '../domain/optimization-request.ts';
import { findEntity, insertEntity, type EntityRow } from '../store/entities.ts';
import { hasPendingOptimization } from '../store/optimizations.ts';
import { insertMessage } from '../store/outbox.ts';

/**
 * Asks the optimizer to optimize a robo-advised portfolio: a PENDING optimization and the request
 * message (AsyncAPI OptimizerRequest, published by the relay on platform.optimizer.requests), both
 * in the caller's transaction. Nothing for a portfolio without a policy, and no second request
 * while one is pending (docs/adr/0009-funding-modes.md). Returns the optimization id when one was requested.
 */
export async function requestOptimization(trx: Knex.Transaction, portfolio: EntityRow, reason: OptimizationReason, now: string): Promise<string | undefined> {
  if (!isRobo(portfolio.doc) || portfolio.doc.archived === true) return undefined;
  const policyId = ((portfolio.doc.config as Doc).manager_settings as Doc | undefined)?.policy_id;
  if (typeof policyId !== 'string') return undefined;
  const tenantId = portfolio.tenant_id;
  const policy = await findEntity(trx, { tenantId, type: 'policies', id: policyId });
  if (!policy || policy.deleted) return undefined;
  if (await hasPendingOptimization(trx, tenantId, portfolio.id)) return undefined;
  const id = newId('O');
  const at = new Date(now);
  await insertEntity(trx, {
    tenant_id: tenantId,
    id,
    type: 'optimizations',
    parent_id: portfolio.id,
    version: 1,
    doc: pendingOptimization(portfolio.id),
    deleted: false,
    readable_by: portfolio.readable_by,
    modifiable_by: portfolio.modifiable_by,
    created_at: at,
    version_at: at,
    version_author_id: null,
  });
  const requestId = newUlid();
  const payload = optimizerRequest({ requestId, tenantId, portfolio, policy: policy.doc, optimizationId: id, reason, now });
  await insertMessage(trx, tenantId, { id: requestId, natsSubject: subjects.optimizerRequests, entityId: portfolio.id, payload, created: now });
  return id;
}
