import type { Knex } from 'knex';
import { BatchingClient, DeferredFailure } from './batching-client.ts';
import { batchingConnection } from './deferred.ts';

export type TenantSettings = { broker_integration: 'CLIENT' | 'SERVICE' };

export type TenantWork<T> = (trx: Knex.Transaction, tenant: TenantSettings) => Promise<T>;

/** Runs work in the request's tenant transaction (its own, or one it shares with its Idempotency-Key). */
export type TenantRunner = <T>(work: TenantWork<T>) => Promise<T>;

const SCOPE = `select set_config('app.tenant_id', $1, true), set_config('role', 'platform_tenant', true), set_config('lock_timeout', $2, true),
                      (select broker_integration from tenants where id = $3) as broker_integration`;

/** Each tenant's settings as its last transaction read them: what the next one expects to read. */
const lastRead = new Map<string, TenantSettings>();
const remember = (tenantId: string, settings: TenantSettings) => {
  if (lastRead.size >= 10_000) lastRead.clear();
  lastRead.set(tenantId, settings);
};

class SettingsChanged extends Error {
  constructor() {
    super("the tenant's settings changed since its last transaction");
  }
}

/**
 * Runs `work` in one transaction as the `platform_tenant` role with `app.tenant_id` set, so that
 * row-level security shows only this tenant's rows even to a query that forgets to say so. The
 * same statement reads the tenant's settings and sets the lock timeout (0: wait as long as it takes).
 *
 * On the service's connections (docs/adr/0031-http-hot-path.md) that statement is no round trip
 * of its own: it leaves with the work's first statement, and the work is given the settings the
 * tenant's last transaction read. When the settings read in this transaction differ, this
 * transaction is rolled back, whatever the work made of it, and runs again with them read first.
 */
export async function inTenant<T>(db: Knex, tenantId: string, work: TenantWork<T>, options: { lockTimeoutMs?: number } = {}): Promise<T> {
  const values = [tenantId, `${options.lockTimeoutMs ?? 0}ms`, tenantId];
  const expected = lastRead.get(tenantId);
  let changed = false;
  try {
    return await db.transaction(async (trx) => {
      const connection = expected && (await batchingConnection(trx));
      if (connection) {
        const check = (result: { rows: { broker_integration: string }[] }) => {
          if (result.rows[0]?.broker_integration === expected.broker_integration) return undefined;
          changed = true;
          return new SettingsChanged();
        };
        connection.ahead({ text: SCOPE, values, check });
        return work(trx, expected);
      }
      const { rows } = await trx.raw(SCOPE.replace(/\$\d/g, '?'), values);
      const settings: TenantSettings = { broker_integration: rows[0].broker_integration };
      remember(tenantId, settings);
      return work(trx, settings);
    });
  } catch (error) {
    // A deferred statement's failure, as it said what it means (store/batching-client.ts).
    if (error instanceof DeferredFailure) throw error.failure;
    if (!changed) throw error;
    lastRead.delete(tenantId);
    return inTenant(db, tenantId, work, options);
  }
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

/**
 * Opens a read-only REPEATABLE READ transaction under the tenant's row-level security, which the
 * caller must end (commit or rollback): every statement in it reads the same snapshot, however
 * long the caller takes between them (a streamed answer, docs/adr/0060-personal-data-export.md).
 */
export async function openTenantSnapshot(db: Knex, tenantId: string): Promise<Knex.Transaction> {
  const trx = await db.transaction({ isolationLevel: 'repeatable read', readOnly: true });
  try {
    await trx.raw(READ_SCOPE.replace(/\$\d/g, '?'), [tenantId]);
    return trx;
  } catch (error) {
    await trx.rollback();
    throw error;
  }
}
