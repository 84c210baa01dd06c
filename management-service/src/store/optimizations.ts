import type { Knex } from 'knex';

/** Whether the portfolio has an optimization that the optimizer still computes. */
export async function hasPendingOptimization(trx: Knex.Transaction, tenantId: string, portfolioId: string): Promise<boolean> {
  const row = await trx('entities')
    .select('id')
    .where({ tenant_id: tenantId, parent_id: portfolioId, type: 'optimizations', deleted: false })
    .whereRaw(`doc ->> 'status' = 'PENDING'`)
    .first();
  return row !== undefined;
}
