import type { Knex } from 'knex';

export type TenantSettings = { broker_integration: 'CLIENT' | 'SERVICE' };

export type TenantWork<T> = (trx: Knex.Transaction, tenant: TenantSettings) => Promise<T>;

/** Runs work in the request's tenant transaction (its own, or one it shares with its Idempotency-Key). */
export type TenantRunner = <T>(work: TenantWork<T>) => Promise<T>;

/**
 * Runs `work` in one transaction as the `platform_tenant` role with `app.tenant_id` set, so that
 * row-level security shows only this tenant's rows even to a query that forgets to say so. The
 * same round trip reads the tenant's settings and sets the lock timeout (0: wait as long as it takes).
 */
export function inTenant<T>(db: Knex, tenantId: string, work: TenantWork<T>, options: { lockTimeoutMs?: number } = {}): Promise<T> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw(
      `select set_config('app.tenant_id', ?, true), set_config('role', 'platform_tenant', true), set_config('lock_timeout', ?, true),
              (select broker_integration from tenants where id = ?) as broker_integration`,
      [tenantId, `${options.lockTimeoutMs ?? 0}ms`, tenantId],
    );
    return work(trx, { broker_integration: rows[0].broker_integration });
  });
}
