import type { Knex } from 'knex';
import { newId, toText } from '@platform/shared';
import { heldCash } from '../domain/cash-holds.ts';
import { roboWithdrawalAmount, type WithdrawalTrigger } from '../domain/funding.ts';
import { insertInstruction, openInstructions } from '../store/broker-instructions.ts';
import type { EntityRow } from '../store/entities.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';

/**
 * Queues a WITHDRAWAL cash move (subaccount → house account) of the portfolio, `amount` a positive decimal string as
 * it will be booked and reported; `transactionId` is the customer's PENDING CASH transaction, null when the service
 * pays out a divest_amount (its transaction is written at settlement).
 * The broker instructions' unique index keeps one withdrawal in flight per portfolio.
 */
export async function queueWithdrawalMove(
  trx: Knex.Transaction,
  portfolio: EntityRow,
  amount: string,
  transactionId: string | null,
  now: string,
): Promise<string> {
  const id = newId('B');
  await insertInstruction(
    trx,
    {
      id,
      tenant_id: portfolio.tenant_id,
      kind: 'WITHDRAWAL',
      portfolio_id: portfolio.id,
      transaction_id: transactionId,
      amount,
      currency: String(portfolio.doc.base_currency),
    },
    now,
  );
  return id;
}

/**
 * Pays out a robo-advised portfolio's divest_amount when the service integrates the broker and the cash is there
 * (domain/funding.ts roboWithdrawalAmount decides; docs/adr/0022-execution-and-withdrawals.md). `settling` is the
 * instruction whose settlement calls this, not counted as in flight. Returns the instruction id when one was queued.
 */
export async function queueRoboWithdrawal(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  portfolio: EntityRow,
  trigger: WithdrawalTrigger,
  now: string,
  settling?: string,
): Promise<string | undefined> {
  if (portfolio.deleted) return undefined;
  const open = await openInstructions(trx, portfolio.tenant_id, portfolio.id, settling);
  const inFlight = { withdrawal: open.some((i) => i.kind === 'WITHDRAWAL'), execution: open.some((i) => i.kind === 'ORDERS') };
  const amount = roboWithdrawalAmount(portfolio.doc, tenant.broker_integration, trigger, inFlight, heldCash(open));
  return amount && queueWithdrawalMove(trx, portfolio, toText(amount), null, now);
}
