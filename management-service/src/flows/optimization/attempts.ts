import type { Knex } from 'knex';
import { newUlid, subjects } from '@platform/shared';
import { ended, unoptimizable } from '../../domain/optimization-gate.ts';
import { inputsDigest, optimizerRequest, type OptimizationReason } from '../../domain/optimization-request.ts';
import type { EntityRow } from '../../store/entities.ts';
import { attemptsOf, insertRequests, updateOptimizations, type NewRequest, type RequestRow } from '../../store/optimizations.ts';
import { insertMessages, type InternalMessage } from '../../store/outbox.ts';
import { optimizationVersion, policyOf } from './rows.ts';

/** What became of a result or a time-out. */
export type ResultOutcome = 'UNKNOWN_REQUEST' | 'ALREADY_ANSWERED' | 'MISMATCH' | 'LATE' | 'STORED' | 'RESENT' | 'CLOSED' | 'FAILED' | 'NOT_WAITING';

/** One request to the optimizer: its bookkeeping row and its message for the relay (published on the tenant's platform.optimizer.requests.<tenant>). */
export function attempt(input: { portfolio: EntityRow; policy: EntityRow; optimizationId: string; reason: OptimizationReason; attempt: number; now: string }): {
  request: NewRequest;
  message: InternalMessage;
} {
  const requestId = newUlid();
  const tenantId = input.portfolio.tenant_id;
  const payload = optimizerRequest({
    requestId,
    tenantId,
    portfolio: input.portfolio,
    policy: input.policy.doc,
    optimizationId: input.optimizationId,
    reason: input.reason,
    now: input.now,
  });
  return {
    request: {
      request_id: requestId,
      tenant_id: tenantId,
      optimization_id: input.optimizationId,
      portfolio_id: input.portfolio.id,
      reason: input.reason,
      attempt: input.attempt,
      sent_at: input.now,
      inputs_digest: inputsDigest(payload, input.policy),
    },
    message: { id: requestId, natsSubject: subjects.optimizerRequests(tenantId), entityId: input.portfolio.id, payload, created: input.now },
  };
}

/**
 * A PENDING optimization whose request is no longer useful (stale inputs, no answer in time) is asked again with the
 * portfolio's current inputs, as the next attempt; when the portfolio may no longer be optimized, it ends NOT_OPTIMIZED
 * saying why (which reopens the gate).
 */
export async function askAgainOrClose(
  trx: Knex.Transaction,
  portfolio: EntityRow,
  optimization: EntityRow,
  previous: RequestRow,
  now: string,
): Promise<ResultOutcome> {
  const tenantId = portfolio.tenant_id;
  const policy = await policyOf(trx, portfolio);
  // Only the portfolio's own state counts: a cool-down set since holds back new optimizations, not this one.
  const unfit = unoptimizable(portfolio, policy);
  if (unfit) {
    const detail = `The portfolio changed while the optimizer computed and may no longer be optimized: ${unfit.detail}`;
    await updateOptimizations(trx, tenantId, [optimizationVersion(optimization, ended(optimization.doc, 'NOT_OPTIMIZED', detail), portfolio, now, null)]);
    return 'CLOSED';
  }
  const { last } = await attemptsOf(trx, tenantId, optimization.id);
  const next = attempt({ portfolio, policy: policy!, optimizationId: optimization.id, reason: previous.reason as OptimizationReason, attempt: last + 1, now });
  await insertRequests(trx, [next.request]);
  await insertMessages(trx, tenantId, [next.message]);
  return 'RESENT';
}
