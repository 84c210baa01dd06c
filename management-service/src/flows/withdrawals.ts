import type { Knex } from 'knex';
import { parseDecimal, toText } from '@platform/shared';
import { brokerFor } from '../domain/broker-role.ts';
import { heldCash, payoutToSend } from '../domain/cash-holds.ts';
import { transactions } from '../domain/entities/catalog.ts';
import { checkWithdrawalRequest } from '../domain/funding.ts';
import { mustRequestWithdrawal } from '../domain/permissions.ts';
import type { Principal } from '../domain/principal.ts';
import { openInstructions, type WithdrawalInstruction } from '../store/broker-instructions.ts';
import { findEntity, type EntityRow } from '../store/entities.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';
import { writeNext } from './entity-writes.ts';
import { bookCashTransaction, bookWithdrawal, lockPortfolio, writeContext } from './funding.ts';
import type { InstructionHandler, InstructionPreparer } from './instruction-handler.ts';
import { queueWithdrawalMove } from './withdrawal-queue.ts';

/**
 * POST /portfolios/{portfolio_id}/withdrawals/ (docs/adr/0022-execution-and-withdrawals.md): the owner or the machine
 * client asks the service to pay out cash of a USER_MANAGED REAL_MONEY portfolio whose tenant lets the service
 * integrate the broker. Writes a PENDING negative CASH transaction and the WITHDRAWAL cash move; the settlement job
 * books it. Every refusal comes before anything is written.
 */
export async function requestWithdrawal(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  principal: Principal,
  portfolioId: string,
  request: { amount: string; currency: string },
  now: string,
): Promise<EntityRow> {
  const portfolio = await lockPortfolio(trx, principal.tenantId, portfolioId);
  mustRequestWithdrawal(principal, portfolio);
  const open = await openInstructions(trx, portfolio.tenant_id, portfolio.id);
  const inFlight = open.some((i) => i.kind === 'WITHDRAWAL');
  checkWithdrawalRequest(portfolio.doc, tenant.broker_integration, request.amount, request.currency, inFlight, heldCash(open));
  const wctx = writeContext(principal, tenant, portfolio, now);
  const body = { status: 'PENDING', quantity: `-${request.amount}`, currency: request.currency, external_id: null, datetime: now };
  const transaction = await bookCashTransaction(trx, tenant, wctx, body);
  await queueWithdrawalMove(trx, portfolio, request.amount, transaction.id, now);
  return transaction;
}

/**
 * How a WITHDRAWAL is first handed to the broker (docs/adr/0022-execution-and-withdrawals.md). A customer's request goes
 * as asked: its amount has been held from the cash since. A robo-advised portfolio's payout goes with no more than the
 * divest_amount in force now (the client may have lowered it since it was queued) and is dropped when nothing is due.
 */
export const preparePayout: InstructionPreparer<WithdrawalInstruction> = async ({ trx }, instruction) => {
  if (instruction.transaction_id !== null) return { send: instruction };
  const tenantId = instruction.tenant_id;
  const portfolio = await findEntity(trx, { tenantId, type: 'portfolios', id: instruction.portfolio_id }, { forUpdate: true });
  if (!portfolio || portfolio.deleted) return { settled: { outcome: 'SKIPPED', detail: 'the portfolio is gone', result: null } };
  const others = heldCash(await openInstructions(trx, tenantId, portfolio.id, instruction.id));
  const queued = parseDecimal(instruction.amount);
  const amount = payoutToSend(portfolio.doc, queued, others);
  if (amount.lte(0)) return { settled: { outcome: 'SKIPPED', detail: 'nothing was left to pay out when the payout was to be sent', result: null } };
  return { send: amount.eq(queued) ? instruction : { ...instruction, amount: toText(amount) } };
};

/**
 * The settlement of a WITHDRAWAL instruction: the cash move to the house account (on the simulated broker for a
 * PAPER_MONEY portfolio, the configured one otherwise). SETTLED:
 * the negative CASH transaction SETTLED (the customer's PENDING one, or a new one for a divest_amount), cash and
 * divest_amount lowered, the withdrawal record and `notifications.withdrawal-executed`. REJECTED: the customer's
 * PENDING transaction CANCELLED and nothing else; a divest_amount stays and is paid at its next trigger.
 */
export const settleWithdrawal: InstructionHandler<WithdrawalInstruction> = async ({ trx, tenant, brokers, now, logger }, instruction) => {
  const tenantId = instruction.tenant_id;
  const portfolio = await findEntity(trx, { tenantId, type: 'portfolios', id: instruction.portfolio_id }, { forUpdate: true });
  const pending = instruction.transaction_id
    ? await findEntity(trx, { tenantId, type: 'transactions', id: instruction.transaction_id }, { forUpdate: true })
    : undefined;
  if (!portfolio || (instruction.transaction_id && pending?.doc.status !== 'PENDING')) {
    return { outcome: 'SKIPPED', detail: 'the portfolio or its PENDING transaction is gone', result: null };
  }
  const broker = brokerFor(portfolio.doc) === 'PAPER' ? brokers.paper : brokers.configured;
  const result = await broker.moveCash({
    id: instruction.id,
    tenantId,
    portfolioId: portfolio.id,
    direction: 'TO_HOUSE_ACCOUNT',
    amount: instruction.amount,
    currency: instruction.currency,
  });
  const wctx = writeContext({ tenantId, kind: 'machine', subject: 'broker' }, tenant, portfolio, now);
  if (result.status === 'REJECTED') {
    if (pending) await writeNext(trx, transactions, tenant, wctx, pending, transactions.update(pending.doc, { status: 'CANCELLED' }, wctx));
    logger.warn('broker refused a withdrawal; nothing booked', {
      tenant: tenantId,
      portfolio: portfolio.id,
      instruction: instruction.id,
      reason: result.reason,
    });
    return { outcome: result.status, detail: result.reason, result };
  }
  const transaction = pending
    ? await writeNext(trx, transactions, tenant, wctx, pending, transactions.update(pending.doc, { status: 'SETTLED' }, wctx))
    : await bookCashTransaction(trx, tenant, wctx, {
        status: 'SETTLED',
        quantity: `-${instruction.amount}`,
        currency: instruction.currency,
        external_id: null,
        datetime: now,
      });
  const paid = { amount: instruction.amount, currency: instruction.currency, external_id: null, transaction_id: transaction.id };
  // The broker has moved the money, and its amount has been held from the cash since the move was queued, so no other
  // write has spent it: booked, the cash stays at or above 0.
  await bookWithdrawal(trx, tenant, wctx, portfolio, paid, { mustCover: false, book: true });
  return { outcome: result.status, detail: null, result };
};
