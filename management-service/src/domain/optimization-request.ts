import type { components } from '@platform/shared/generated/events';
import type { Doc } from './merge.ts';

export type OptimizerRequest = components['schemas']['OptimizerRequest'];
export type OptimizationReason = OptimizerRequest['reason'];

const settings = (doc: Doc) => ((doc.config as Doc).manager_settings ?? {}) as Doc;

/** A new optimization (docs/adr/0009-funding-modes.md) as stored while the optimizer computes. */
export function pendingOptimization(portfolioId: string): Doc {
  return {
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
  const divest = settings(input.portfolio.doc).divest_amount;
  return {
    request_id: input.requestId,
    tenant_id: input.tenantId,
    portfolio_id: input.portfolio.id,
    optimization_id: input.optimizationId,
    reason: input.reason,
    requested_at: input.now,
    base_currency: String(input.portfolio.doc.base_currency),
    holdings: (input.portfolio.doc.portfolio ?? {}) as Record<string, number>,
    cash_buffer: Number(config.cash_buffer ?? 0),
    divest_amount: typeof divest === 'number' && divest > 0 ? divest : 0,
    asset_class_bands: (config.asset_class_bands ?? {}) as OptimizerRequest['asset_class_bands'],
    model_portfolio: (config.model_portfolio ?? {}) as Record<string, number>,
    fractional_shares: config.fractional_shares === true,
    transaction_cost_bps: Number(config.transaction_cost_bps ?? 0),
    rebalancing_threshold: Number(config.rebalancing_threshold ?? 0.05),
  };
}
