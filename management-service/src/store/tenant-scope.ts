import type { Knex } from 'knex';

/**
 * Runs `work` in one transaction as the `platform_tenant` role with `app.tenant_id` set, so that
 * row-level security shows only this tenant's rows even to a query that forgets to say so.
 */
export function inTenant<T>(db: Knex, tenantId: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw(`select set_config('app.tenant_id', ?, true), set_config('role', 'platform_tenant', true)`, [tenantId]);
    return work(trx);
  });
}
