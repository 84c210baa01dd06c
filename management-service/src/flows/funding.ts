import type { Knex } from 'knex';
import { newId, parseDecimal, type Money } from '@platform/shared';
import type { Principal } from '../domain/principal.ts';
import { transactions } from '../domain/entities/catalog.ts';
import type { WriteContext } from '../domain/entities/kind.ts';
import { portfolios } from '../domain/entities/portfolios.ts';
import { DuplicateValue, EntityNotFound } from '../domain/errors.ts';
import { cashNotification, type Owner } from '../domain/events.ts';
import { checkCashEvent, checkDepositTarget, depositPatch, isRobo, withdrawalPatch } from '../domain/funding.ts';
import type { Doc } from '../domain/merge.ts';
import { heldCash } from '../domain/cash-holds.ts';
import { insertInstruction, openInstructions, type DepositInstruction } from '../store/broker-instructions.ts';
import { findEntity, lockEntityWithOwner, type EntityRow } from '../store/entities.ts';
import { insertEvents } from '../store/outbox.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';
import { insertWithdrawal, type WithdrawalRow } from '../store/withdrawals.ts';
import { ownerOf, type ExtraEvents } from './entity-effects.ts';
import type { InstructionHandler } from './instruction-handler.ts';
import { writeNew, writeNewAndNext, writeNext } from './entity-writes.ts';
import { requestOptimization } from './optimization/request.ts';

export type CashEvent = { amount: string; currency: string; portfolio: string; external_id?: string };

export async function lockPortfolio(trx: Knex.Transaction, tenantId: string, id: string): Promise<EntityRow> {
  const row = await findEntity(trx, { tenantId, type: 'portfolios', id }, { forUpdate: true });
  if (!row || row.deleted) throw new EntityNotFound('portfolio');
  return row;
}

/** The portfolio locked, with its owner read in the same round trip (for the events the flow writes). */
export async function lockPortfolioWithOwner(trx: Knex.Transaction, tenantId: string, id: string): Promise<{ portfolio: EntityRow; owner: Owner | undefined }> {
  const found = await lockEntityWithOwner(trx, { tenantId, type: 'portfolios', id });
  if (!found || found.row.deleted) throw new EntityNotFound('portfolio');
  return { portfolio: found.row, owner: found.owner };
}

export const writeContext = (principal: Principal, tenant: TenantSettings, portfolio: EntityRow, now: string): WriteContext => ({
  principal,
  now,
  tenant,
  parent: { id: portfolio.id, doc: portfolio.doc, readable_by: portfolio.readable_by, modifiable_by: portfolio.modifiable_by },
});

/** A CASH transaction whose external_id is taken: a 409 that points into the event. */
const intoEvent = (error: unknown) => (error instanceof DuplicateValue ? new DuplicateValue('external_id', ['body', 'data', 'external_id']) : error);

/** A CASH transaction of the portfolio; a taken external_id is a 409 that points into the event. */
export async function bookCashTransaction(trx: Knex.Transaction, tenant: TenantSettings, wctx: WriteContext, body: Doc): Promise<EntityRow> {
  try {
    return await writeNew(trx, transactions, tenant, wctx, transactions.create({ type: 'CASH', ...body }, wctx));
  } catch (error) {
    throw intoEvent(error);
  }
}

/** The policy's minimum funding amount; undefined for a portfolio without policy. */
async function minimumFunding(trx: Knex.Transaction, portfolio: EntityRow): Promise<string | undefined> {
  const policyId = ((portfolio.doc.config as Doc).manager_settings as Doc | undefined)?.policy_id;
  if (!isRobo(portfolio.doc) || typeof policyId !== 'string') return undefined;
  const policy = await findEntity(trx, { tenantId: portfolio.tenant_id, type: 'policies', id: policyId });
  return (policy?.doc.config as Doc | undefined)?.minimum_funding_amount as string | undefined;
}

/**
 * The portfolio's change of a settled deposit (docs/adr/0009-funding-modes.md): cash up by the exact amount,
 * funded_since at the first funding that reaches the policy minimum, the status re-derived (with its events by the
 * portfolio's effects) and the customer notification as `extra` events.
 */
async function settledDepositChange(
  trx: Knex.Transaction,
  wctx: WriteContext,
  portfolio: EntityRow,
  amount: string,
  transactionId: string,
): Promise<{ doc: Doc; extra: ExtraEvents }> {
  const patch = depositPatch(portfolio.doc, parseDecimal(amount), await minimumFunding(trx, portfolio), wctx.now);
  const extra: ExtraEvents = (owner, next) => [
    cashNotification('deposit-received', { portfolio: next, owner, amount, currency: String(next.doc.base_currency), transaction_id: transactionId }, wctx.now),
  ];
  return { doc: portfolios.update(portfolio.doc, patch, wctx), extra };
}

/** The steps of a settled deposit whose transaction exists (settleDeposit), and for a robo-advised portfolio an optimizer request. */
async function bookSettledDeposit(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  wctx: WriteContext,
  portfolio: EntityRow,
  amount: string,
  transactionId: string,
  owner: Owner | undefined,
) {
  const { doc, extra } = await settledDepositChange(trx, wctx, portfolio, amount, transactionId);
  const next = await writeNext(trx, portfolios, tenant, wctx, portfolio, doc, { extra, owner });
  await requestOptimization(trx, next, 'DEPOSIT', wctx.now);
}

/**
 * POST /events/deposit/. With the broker integrated by the client the cash has arrived: book it
 * now (a SETTLED transaction). With the broker integrated by the service, write a PENDING
 * transaction and the broker instruction; the settlement job books it (settleDeposit).
 */
export async function deposit(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  principal: Principal,
  event: CashEvent,
  now: string,
): Promise<{ settled: boolean; transaction: EntityRow }> {
  const { portfolio, owner } = await lockPortfolioWithOwner(trx, principal.tenantId, event.portfolio);
  checkDepositTarget(portfolio.doc, event.amount, event.currency);
  const wctx = writeContext(principal, tenant, portfolio, now);
  const settled = tenant.broker_integration === 'CLIENT';
  const body = {
    status: settled ? 'SETTLED' : 'PENDING',
    quantity: event.amount,
    currency: event.currency,
    external_id: event.external_id ?? null,
    datetime: now,
  };
  if (settled) {
    // The SETTLED transaction and the portfolio's cash in one statement that leaves with the next one, at the latest
    // the COMMIT; a taken external_id then fails the transaction (docs/adr/0063-deposit-round-trips.md).
    const id = newId('T');
    const created = { kind: transactions, id, doc: transactions.create({ type: 'CASH', ...body }, wctx) };
    const { doc, extra } = await settledDepositChange(trx, wctx, portfolio, event.amount, id);
    const changed = { kind: portfolios, current: portfolio, doc, extra, owner };
    const written = await writeNewAndNext(trx, tenant, wctx, created, changed, (error) => intoEvent(error) as Error);
    await requestOptimization(trx, written.next, 'DEPOSIT', wctx.now);
    return { settled, transaction: written.created };
  }
  const transaction = await bookCashTransaction(trx, tenant, wctx, body);
  const instruction = {
    id: newId('B'),
    tenant_id: principal.tenantId,
    kind: 'DEPOSIT' as const,
    portfolio_id: portfolio.id,
    transaction_id: transaction.id,
    amount: event.amount,
    currency: event.currency,
  };
  await insertInstruction(trx, instruction, now);
  return { settled, transaction };
}

export type BrokerOutcome = { status: 'SETTLED' } | { status: 'REJECTED'; reason: string };

/**
 * Completes a deposit the broker has executed: the PENDING transaction becomes SETTLED and the
 * deposit is booked, or CANCELLED when the broker refused the move. Runs once per transaction:
 * a transaction no longer PENDING is left alone.
 */
export async function settleDeposit(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  instruction: DepositInstruction,
  outcome: BrokerOutcome,
  now: string,
): Promise<void> {
  const principal: Principal = { tenantId: instruction.tenant_id, kind: 'machine', subject: 'broker' };
  const locked = await lockEntityWithOwner(trx, { tenantId: instruction.tenant_id, type: 'portfolios', id: instruction.portfolio_id });
  const transaction = await findEntity(trx, { tenantId: instruction.tenant_id, type: 'transactions', id: instruction.transaction_id }, { forUpdate: true });
  if (!locked || !transaction || transaction.doc.status !== 'PENDING') return;
  const portfolio = locked.row;
  const wctx = writeContext(principal, tenant, portfolio, now);
  const status = outcome.status === 'SETTLED' ? 'SETTLED' : 'CANCELLED';
  await writeNext(trx, transactions, tenant, wctx, transaction, transactions.update(transaction.doc, { status }, wctx));
  if (outcome.status === 'SETTLED') await bookSettledDeposit(trx, tenant, wctx, portfolio, instruction.amount, transaction.id, locked.owner);
}

/** The settlement of a DEPOSIT instruction: the cash move to the subaccount on the configured broker, then settleDeposit. */
export const settleDepositInstruction: InstructionHandler<DepositInstruction> = async ({ trx, tenant, brokers, now }, instruction) => {
  const result = await brokers.configured.moveCash({
    id: instruction.id,
    tenantId: instruction.tenant_id,
    portfolioId: instruction.portfolio_id,
    direction: 'TO_SUBACCOUNT',
    amount: instruction.amount,
    currency: instruction.currency,
  });
  await settleDeposit(trx, tenant, instruction, result, now);
  return { outcome: result.status, detail: result.status === 'REJECTED' ? result.reason : null, result };
};

/**
 * A withdrawal paid out, booked: with `book`, the portfolio's cash and divest_amount lowered (withdrawalPatch; with
 * `mustCover` the cash not `held` must cover the amount, 409 otherwise); always the withdrawal record and
 * `notifications.withdrawal-executed`.
 */
export async function bookWithdrawal(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  wctx: WriteContext,
  portfolio: EntityRow,
  paid: { amount: string; currency: string; external_id: string | null; transaction_id: string | null },
  options: { mustCover: boolean; book: boolean; held?: Money; owner?: Owner },
): Promise<WithdrawalRow> {
  let current = portfolio;
  if (options.book) {
    const patch = withdrawalPatch(portfolio.doc, parseDecimal(paid.amount), { mustCover: options.mustCover, held: options.held });
    const doc = portfolios.update(portfolio.doc, patch, wctx);
    current = await writeNext(trx, portfolios, tenant, wctx, portfolio, doc, { owner: options.owner });
  }
  const owner = options.owner ?? (await ownerOf(trx, current.tenant_id, current.doc.owned_by_user_id));
  const notification = cashNotification(
    'withdrawal-executed',
    { portfolio: current, owner: owner!, amount: paid.amount, currency: paid.currency, transaction_id: paid.transaction_id },
    wctx.now,
  );
  const record: WithdrawalRow = {
    tenant_id: current.tenant_id,
    portfolio_id: current.id,
    amount: paid.amount,
    currency: paid.currency,
    external_id: paid.external_id,
    transaction_id: paid.transaction_id,
    notification_event_id: notification.envelope.id,
    recorded_at: wctx.now,
  };
  try {
    await insertWithdrawal(trx, record);
  } catch (error) {
    if (error instanceof DuplicateValue) throw new DuplicateValue('external_id', ['body', 'data', 'external_id']);
    throw error;
  }
  await insertEvents(trx, current.tenant_id, [notification]);
  return record;
}

/**
 * POST /events/withdraw/: the withdrawal was paid out. Records it and notifies the customer; with
 * the broker integrated by the service also books the negative CASH transaction and lowers cash
 * and divest_amount (the cash must cover it).
 */
export async function recordWithdrawal(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  principal: Principal,
  event: CashEvent,
  now: string,
): Promise<WithdrawalRow> {
  const { portfolio, owner } = await lockPortfolioWithOwner(trx, principal.tenantId, event.portfolio);
  const amount = checkCashEvent(portfolio.doc, event.amount, event.currency);
  const wctx = writeContext(principal, tenant, portfolio, now);
  const book = tenant.broker_integration === 'SERVICE';
  let transactionId: string | null = null;
  let held: Money | undefined;
  if (book) {
    // Checked before the transaction is written, so a refusal writes nothing. Cash held for what is with the broker
    // is not there to pay out (docs/adr/0022-execution-and-withdrawals.md).
    held = heldCash(await openInstructions(trx, portfolio.tenant_id, portfolio.id));
    withdrawalPatch(portfolio.doc, amount, { held });
    const body = { status: 'SETTLED', quantity: `-${event.amount}`, currency: event.currency, external_id: event.external_id ?? null, datetime: now };
    transactionId = (await bookCashTransaction(trx, tenant, wctx, body)).id;
  }
  const paid = { amount: event.amount, currency: event.currency, external_id: event.external_id ?? null, transaction_id: transactionId };
  return bookWithdrawal(trx, tenant, wctx, portfolio, paid, { mustCover: true, book, held, owner });
}
