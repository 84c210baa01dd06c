import type { Knex } from 'knex';
import { OPEN_TRANSACTION_STATES, REDACTED, type OwnedPortfolio } from '../domain/erasure.ts';
import type { Doc } from '../domain/merge.ts';

// The reads and writes of an erasure (docs/adr/0059-personal-data-erasure.md), in the caller's
// tenant transaction.

/** The portfolios the user owns, deleted ones too, with their transactions under way. */
export async function ownedPortfolios(trx: Knex.Transaction, tenantId: string, userId: string): Promise<OwnedPortfolio[]> {
  const rows = (await trx('entities as p')
    .select('p.id', 'p.doc', 'p.deleted')
    .select(
      trx.raw(
        `(select count(*) from entities t where t.tenant_id = p.tenant_id and t.parent_id = p.id and t.type = 'transactions'
           and not t.deleted and t.doc ->> 'status' = any(?))::integer as open_transactions`,
        [[...OPEN_TRANSACTION_STATES]],
      ),
    )
    .where({ 'p.tenant_id': tenantId, 'p.type': 'portfolios' })
    // The expression of the owner index (migration 003).
    .whereRaw(`platform_text(p.doc, '{owned_by_user_id}') = ?`, [userId])
    .orderBy('p.id')) as { id: string; doc: Doc; deleted: boolean; open_transactions: number }[];
  return rows.map((r) => ({ id: r.id, doc: r.doc, deleted: r.deleted, openTransactions: r.open_transactions }));
}

/** Whether the user is in the ledger of erasures. */
export async function isErased(trx: Knex.Transaction, tenantId: string, userId: string): Promise<boolean> {
  return (await trx('user_erasures').first('user_id').where({ tenant_id: tenantId, user_id: userId })) !== undefined;
}

/**
 * Overwrites the personal fields of every stored version of the user with null, records the
 * erasure in the ledger, and removes the kept answer of the user's creation (an Idempotency-Key's
 * stored response of POST /users/ holds the person's data). Returns the versions overwritten.
 */
export async function redactUser(trx: Knex.Transaction, tenantId: string, userId: string, erasedAt: string): Promise<number> {
  const redacted = await trx('entity_versions')
    .where({ tenant_id: tenantId, id: userId })
    .update({ doc: trx.raw('doc || ?::jsonb', [JSON.stringify(REDACTED)]) });
  await trx('user_erasures').insert({ tenant_id: tenantId, user_id: userId, erased_at: erasedAt });
  await trx('idempotency_keys')
    .where({ tenant_id: tenantId, method: 'POST', path: '/users' }) // scopes keep paths without their trailing slash
    .whereRaw('response_body like ?', [`%"id":"${userId}"%`])
    .delete();
  return redacted;
}
