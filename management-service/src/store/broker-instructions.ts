import type { Knex } from 'knex';

/** A cash move handed to the broker (SERVICE integration), as stored with its PENDING transaction. */
export type BrokerInstruction = {
  id: string;
  tenant_id: string;
  kind: 'DEPOSIT';
  portfolio_id: string;
  transaction_id: string;
  amount: string;
  currency: string;
  attempts: number;
};

export async function insertInstruction(trx: Knex.Transaction, instruction: Omit<BrokerInstruction, 'attempts'>, now: string): Promise<void> {
  await trx('broker_instructions').insert({ ...instruction, created_at: now, not_before: now });
  await trx.raw(`select pg_notify('broker', '')`);
}

/** Instructions of every tenant that are due, oldest first (read as the owning role, outside RLS). */
export async function dueInstructions(db: Knex, limit: number): Promise<{ id: string; tenant_id: string }[]> {
  return db('broker_instructions').select('id', 'tenant_id').whereNull('settled_at').where('not_before', '<=', db.fn.now()).orderBy('not_before').limit(limit);
}

/** Locks an unsettled instruction for the caller's transaction; undefined when settled or taken by another worker. */
export async function lockInstruction(trx: Knex.Transaction, tenantId: string, id: string): Promise<BrokerInstruction | undefined> {
  return trx('broker_instructions')
    .select('id', 'tenant_id', 'kind', 'portfolio_id', 'transaction_id', trx.raw('amount::text as amount'), 'currency', 'attempts')
    .where({ tenant_id: tenantId, id })
    .whereNull('settled_at')
    .forUpdate()
    .skipLocked()
    .first();
}

export async function markSettled(trx: Knex.Transaction, tenantId: string, id: string, error: string | null): Promise<void> {
  await trx('broker_instructions').where({ tenant_id: tenantId, id }).update({ settled_at: trx.fn.now(), last_error: error });
}

/** A failed attempt: try again after `delayMs`. */
export async function postpone(db: Knex, id: string, delayMs: number, error: string): Promise<void> {
  await db('broker_instructions')
    .where({ id })
    .update({ attempts: db.raw('attempts + 1'), last_error: error, not_before: db.raw(`now() + make_interval(secs => ?)`, [delayMs / 1000]) });
}
