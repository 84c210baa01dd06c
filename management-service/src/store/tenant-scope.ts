import type { Knex } from 'knex';
import { BatchingClient } from './batching-client.ts';

export type TenantSettings = { broker_integration: 'CLIENT' | 'SERVICE' };

export type TenantWork<T> = (trx: Knex.Transaction, tenant: TenantSettings) => Promise<T>;

/** Runs work in the request's tenant transaction (its own, or one it shares with its Idempotency-Key). */
export type TenantRunner = <T>(work: TenantWork<T>) => Promise<T>;

/**
 * Runs `work` in one transaction as the `platform_tenant` role with `app.tenant_id` set, so that
 * row-level security shows only this tenant's rows even to a query that forgets to say so. The
 * same round trip reads the tenant's settings and sets the lock timeout (0: wait as long as it takes);
 * on the service's connections it is also the one that begins the transaction (store/batching-client.ts).
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

const READ_SCOPE = `select set_config('app.tenant_id', $1, true), set_config('role', 'platform_tenant', true)`;

const batches = (db: Knex) => (db.client as { driver?: { Client?: unknown } }).driver?.Client === BatchingClient;

/**
 * Runs `work`, which only reads, under the same row-level security as inTenant. On the service's
 * connections every statement of `work` goes together with the tenant scope as one implicit
 * transaction, so a read of one statement is one round trip (docs/adr/0031-http-hot-path.md);
 * statements see what is committed when each runs, as in inTenant's read-committed transaction.
 * Elsewhere (a plain knex) it is inTenant.
 */
export async function readInTenant<T>(db: Knex, tenantId: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if (!batches(db)) return inTenant(db, tenantId, (trx) => work(trx));
  const connection = (await db.client.acquireConnection()) as BatchingClient;
  connection.scope = { text: READ_SCOPE, values: [tenantId] };
  try {
    return await db.transaction((trx) => work(trx), { connection });
  } finally {
    connection.scope = undefined;
    await db.client.releaseConnection(connection);
  }
}
