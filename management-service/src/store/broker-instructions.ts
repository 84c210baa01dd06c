import type { Knex } from 'knex';
import type { OrderLine } from '../domain/execution.ts';

/** `sent`: handed to the broker at least once (sent_at committed before the call), so it is sent again only as it is. */
type Common = { id: string; tenant_id: string; portfolio_id: string; currency: string; attempts: number; sent: boolean };

/** A deposit: cash house account → subaccount, with its PENDING CASH transaction. */
export type DepositInstruction = Common & { kind: 'DEPOSIT'; transaction_id: string; amount: string };

/**
 * A withdrawal: cash subaccount → house account. A customer's request has its PENDING CASH transaction; a robo-advised
 * portfolio's divest_amount freed by the service has none until it settles.
 */
export type WithdrawalInstruction = Common & { kind: 'WITHDRAWAL'; transaction_id: string | null; amount: string };

/** An optimization's orders; its fills become one ORDER transaction per ISIN. */
export type OrdersInstruction = Common & { kind: 'ORDERS'; optimization_id: string; orders: OrderLine[] };

/** A broker instruction (docs/adr/0022-execution-and-withdrawals.md), as stored. */
export type BrokerInstruction = DepositInstruction | WithdrawalInstruction | OrdersInstruction;

type Stored = 'attempts' | 'sent';
export type NewInstruction = Omit<DepositInstruction, Stored> | Omit<WithdrawalInstruction, Stored> | Omit<OrdersInstruction, Stored>;

export async function insertInstruction(trx: Knex.Transaction, instruction: NewInstruction, now: string): Promise<void> {
  const row = instruction.kind === 'ORDERS' ? { ...instruction, orders: JSON.stringify(instruction.orders) } : instruction;
  await trx('broker_instructions').insert({ ...row, created_at: now, not_before: now });
  await trx.raw(`select pg_notify('broker', '')`);
}

/** Instructions of every tenant that are due, oldest first (read as the owning role, outside RLS). */
export async function dueInstructions(db: Knex, limit: number): Promise<{ id: string; tenant_id: string }[]> {
  return db('broker_instructions').select('id', 'tenant_id').whereNull('settled_at').where('not_before', '<=', db.fn.now()).orderBy('not_before').limit(limit);
}

type Row = Omit<Common, 'sent'> & {
  sent_at: Date | null;
  kind: BrokerInstruction['kind'];
  transaction_id: string | null;
  amount: string | null;
  optimization_id: string | null;
  orders: OrderLine[] | null;
};

const toInstruction = (row: Row): BrokerInstruction => {
  const common = {
    id: row.id,
    tenant_id: row.tenant_id,
    portfolio_id: row.portfolio_id,
    currency: row.currency,
    attempts: row.attempts,
    sent: row.sent_at !== null,
  };
  switch (row.kind) {
    case 'ORDERS':
      return { ...common, kind: row.kind, optimization_id: row.optimization_id!, orders: row.orders! };
    case 'WITHDRAWAL':
      return { ...common, kind: row.kind, transaction_id: row.transaction_id, amount: row.amount! };
    case 'DEPOSIT':
      return { ...common, kind: row.kind, transaction_id: row.transaction_id!, amount: row.amount! };
  }
};

/** Locks an unsettled instruction for the caller's transaction; undefined when settled or taken by another worker. */
export async function lockInstruction(trx: Knex.Transaction, tenantId: string, id: string): Promise<BrokerInstruction | undefined> {
  const row = (await trx('broker_instructions')
    .select(
      'id',
      'tenant_id',
      'kind',
      'portfolio_id',
      'transaction_id',
      trx.raw('amount::text as amount'),
      'currency',
      'attempts',
      'optimization_id',
      'orders',
      'sent_at',
    )
    .where({ tenant_id: tenantId, id })
    .whereNull('settled_at')
    .forUpdate()
    .skipLocked()
    .first()) as Row | undefined;
  return row && toInstruction(row);
}

/** Whether an execution of this optimization was ever queued. */
export async function hasExecution(trx: Knex.Transaction, tenantId: string, optimizationId: string): Promise<boolean> {
  const row = await trx('broker_instructions').select('id').where({ tenant_id: tenantId, optimization_id: optimizationId, kind: 'ORDERS' }).first();
  return row !== undefined;
}

/**
 * The portfolio's instructions not settled yet, each as it would move the cash (docs/adr/0022-execution-and-withdrawals.md:
 * what they need is held from the cash), `exceptId` left out.
 */
export async function openInstructions(
  trx: Knex.Transaction,
  tenantId: string,
  portfolioId: string,
  exceptId?: string,
): Promise<{ kind: BrokerInstruction['kind']; amount: string | null; orders: OrderLine[] | null; sent: boolean }[]> {
  const query = trx('broker_instructions')
    .select('kind', trx.raw('amount::text as amount'), 'orders', trx.raw('sent_at is not null as sent'))
    .where({ tenant_id: tenantId, portfolio_id: portfolioId })
    .whereNull('settled_at');
  if (exceptId !== undefined) query.whereNot({ id: exceptId });
  return query;
}

/** The instruction is done: `detail` says why when nothing was booked, `result` is the broker's answer. */
export async function markSettled(trx: Knex.Transaction, tenantId: string, id: string, detail: string | null, result: unknown = null): Promise<void> {
  await trx('broker_instructions')
    .where({ tenant_id: tenantId, id })
    .update({ settled_at: trx.fn.now(), last_error: detail, result: result === null ? null : JSON.stringify(result) });
}

/**
 * The instruction is about to be handed to the broker, as `amount` for a cash move: committed before the call, so a
 * retry sends the same.
 */
export async function markSent(trx: Knex.Transaction, tenantId: string, id: string, amount?: string): Promise<void> {
  await trx('broker_instructions')
    .where({ tenant_id: tenantId, id })
    .update({ sent_at: trx.fn.now(), ...(amount === undefined ? {} : { amount }) });
}

/** A failed attempt: try again after `delayMs`. */
export async function postpone(db: Knex, id: string, delayMs: number, error: string): Promise<void> {
  await db('broker_instructions')
    .where({ id })
    .update({ attempts: db.raw('attempts + 1'), last_error: error, not_before: db.raw(`now() + make_interval(secs => ?)`, [delayMs / 1000]) });
}
