import type { Knex } from 'knex';
import type { StoredCashMove, StoredVersion } from '../domain/history-request.ts';

/** Every version of a portfolio, oldest first: when it was written and its holdings (the `portfolio` field). */
export async function portfolioVersions(trx: Knex.Transaction, tenantId: string, portfolioId: string): Promise<StoredVersion[]> {
  return trx('entity_versions')
    .select('version_at', trx.raw("doc -> 'portfolio' as holdings"))
    .where({ tenant_id: tenantId, id: portfolioId })
    .orderBy('version');
}

/** The portfolio's settled cash transactions (deposits positive, withdrawals negative), not deleted. */
export async function settledCashMoves(trx: Knex.Transaction, tenantId: string, portfolioId: string): Promise<StoredCashMove[]> {
  const rows = (await trx('entities')
    .select(trx.raw("doc ->> 'quantity' as quantity"), trx.raw("doc ->> 'currency' as currency"), trx.raw("doc ->> 'datetime' as datetime"))
    .where({ tenant_id: tenantId, parent_id: portfolioId, type: 'transactions', deleted: false })
    .whereRaw("doc ->> 'type' = 'CASH' and doc ->> 'status' = 'SETTLED'")) as StoredCashMove[];
  return rows;
}
