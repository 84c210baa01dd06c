import { createHash } from 'node:crypto';
import type { components } from '@platform/api-types/events';
import type { Doc } from './merge.ts';

export type OptimizerRequest = components['schemas']['OptimizerRequest'];
export type OptimizationReason = OptimizerRequest['reason'];

const settings = (doc: Doc) => ((doc.config as Doc).manager_settings ?? {}) as Doc;

/** A new optimization (docs/adr/0021-optimizations.md) as stored while the optimizer computes. */
export function pendingOptimization(portfolioId: string, externalId: string | null = null): Doc {
  return {
    external_id: externalId,
    portfolio_id: portfolioId,
    is_recommended: false,
    status: 'PENDING',
    owner_choice: null,
    orders: {},
    status_detail: null,
    execution_status: null,
    execution_detail: null,
  };
}

/** What a request takes from the portfolio: its holdings and the amount to free up (0 when none is requested). */
export function optimizerInputs(portfolio: Doc): Pick<OptimizerRequest, 'holdings' | 'divest_amount'> {
  const divest = settings(portfolio).divest_amount;
  return { holdings: (portfolio.portfolio ?? {}) as Record<string, number>, divest_amount: typeof divest === 'number' && divest > 0 ? divest : 0 };
}

/**
 * The message for the optimizer (contracts/events.asyncapi.yaml OptimizerRequest): the holdings,
 * the amount to free up, and the policy's constraints. Holdings are JSON numbers.
 */
export function optimizerRequest(input: {
  requestId: string;
  tenantId: string;
  portfolio: { id: string; doc: Doc };
  policy: Doc;
  optimizationId: string;
  reason: OptimizationReason;
  now: string;
}): OptimizerRequest {
  const config = input.policy.config as Doc;
  return {
    request_id: input.requestId,
    tenant_id: input.tenantId,
    portfolio_id: input.portfolio.id,
    optimization_id: input.optimizationId,
    reason: input.reason,
    requested_at: input.now,
    base_currency: String(input.portfolio.doc.base_currency),
    ...optimizerInputs(input.portfolio.doc),
    cash_buffer: Number(config.cash_buffer ?? 0),
    asset_class_bands: (config.asset_class_bands ?? {}) as OptimizerRequest['asset_class_bands'],
    model_portfolio: (config.model_portfolio ?? {}) as Record<string, number>,
    fractional_shares: config.fractional_shares === true,
    transaction_cost_bps: Number(config.transaction_cost_bps ?? 0),
    // Sent only when the policy has one, so that a request of a policy without it is as before.
    ...(config.fx_cost_bps === undefined ? {} : { fx_cost_bps: Number(config.fx_cost_bps) }),
    rebalancing_threshold: Number(config.rebalancing_threshold ?? 0.05),
  };
}

/** An optimization as answers show it: rows written before optimizations had an external_id answer null. */
export const readOptimization = (doc: Doc): Doc => ({ external_id: null, ...doc });

/**
 * A fingerprint of what a request was built from: the holdings, the amount to free up, and the policy (id and version).
 * A result is stored only while the portfolio's current inputs have the same fingerprint (docs/adr/0021-optimizations.md).
 */
export function inputsDigest(request: Pick<OptimizerRequest, 'holdings' | 'divest_amount'>, policy: { id: string; version: number }): string {
  const holdings = Object.entries(request.holdings).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([holdings, request.divest_amount, policy.id, policy.version]))
    .digest('hex');
}
