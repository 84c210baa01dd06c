import type { Knex } from 'knex';
import { newId } from '@platform/shared';
import { serviceExecutes } from '../domain/broker-role.ts';
import { convertsCurrencies, executionFields, orderLines } from '../domain/execution.ts';
import type { Doc } from '../domain/merge.ts';
import { hasExecution, insertInstruction } from '../store/broker-instructions.ts';
import type { EntityRow } from '../store/entities.ts';
import { policyOf } from './optimization/rows.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';

/** The exchange cost of the portfolio's policy in basis points (0 when it has none, or no policy is found). */
async function fxCostBps(trx: Knex.Transaction, portfolio: EntityRow): Promise<number> {
  const bps = ((await policyOf(trx, portfolio))?.doc.config as Doc | undefined)?.fx_cost_bps;
  return typeof bps === 'number' ? bps : 0;
}

/** Hands an optimization's orders to the broker when the service executes this portfolio's orders (PAPER_MONEY, or
 * REAL_MONEY with the tenant's SERVICE broker integration): writes the broker instruction and returns the fields to
 * store with the optimization's next version ({ execution_status: 'PENDING' }); undefined when the Client
 * Middleware executes (nothing to store).
 *
 * Also undefined when there is nothing to hand over: no orders, or an execution of this optimization already queued
 * (at most one per optimization, docs/adr/0022-execution-and-withdrawals.md). The settlement job books the result
 * (flows/execution-settlement.ts). It imports only the store and the optimization flows' row helpers, so those flows may call it. */
export async function queueExecution(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  portfolio: EntityRow,
  optimization: { id: string; doc: Doc },
  now: string,
): Promise<Doc | undefined> {
  if (!serviceExecutes(tenant.broker_integration, portfolio.doc)) return undefined;
  const planned = (optimization.doc.orders ?? {}) as Doc;
  let orders = orderLines(planned);
  if (orders.length === 0) return undefined;
  // Only orders in another currency need the policy: the conversion's cost is its fx_cost_bps (base orders ask nothing more).
  if (convertsCurrencies(orders)) orders = orderLines(planned, await fxCostBps(trx, portfolio));
  if (await hasExecution(trx, portfolio.tenant_id, optimization.id)) return undefined;
  await insertInstruction(
    trx,
    {
      id: newId('B'),
      tenant_id: portfolio.tenant_id,
      kind: 'ORDERS',
      portfolio_id: portfolio.id,
      optimization_id: optimization.id,
      orders,
      currency: String(portfolio.doc.base_currency),
    },
    now,
  );
  return executionFields('PENDING');
}
