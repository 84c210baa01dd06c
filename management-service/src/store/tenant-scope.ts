import type { Knex } from 'knex';

export type TenantSettings = { broker_integration: 'CLIENT' | 'SERVICE' };

export type TenantWork<T> = (trx: Knex.Transaction, tenant: TenantSettings) => Promise<T>;

/** Runs work in the request's tenant transaction (its own, or one it shares with its Idempotency-Key). */
export type TenantRunner = <T>(work: TenantWork<T>) => Promise<T>;

/**
 * Runs `work` in one transaction as the `platform_tenant` role with `app.tenant_id` set, so that
 * row-level security shows only this tenant's rows even to a query that forgets to say so. The
 * same round trip reads the tenant's settings.
 */
export function inTenant<T>(db: Knex, tenantId: string, work: TenantWork<T>): Promise<T> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw(
      `select set_config('app.tenant_id', ?, true), set_config('role', 'platform_tenant', true),
              (select broker_integration from tenants where id = ?) as broker_integration`,
      [tenantId, tenantId],
    );
    return work(trx, { broker_integration: rows[0].broker_integration });
  });
}
