import type { Knex } from 'knex';

/** Bus credentials (migration 013, docs/adr/0026-bus-authorization.md). */

export type BusCredential = { id: string; tenant_id: string; description: string | null; created_at: Date; revoked_at: Date | null };

export async function insertBusCredential(db: Knex, row: { id: string; tenant_id: string; password_hash: string; description?: string }): Promise<void> {
  await db('bus_credentials').insert(row);
}

/** Without their hashes, newest last; of one tenant when given. */
export async function listBusCredentials(db: Knex, tenantId?: string): Promise<BusCredential[]> {
  const query = db('bus_credentials').select('id', 'tenant_id', 'description', 'created_at', 'revoked_at').orderBy('id');
  return tenantId ? query.where({ tenant_id: tenantId }) : query;
}

export async function revokeBusCredential(db: Knex, id: string): Promise<boolean> {
  return (await db('bus_credentials').where({ id }).whereNull('revoked_at').update({ revoked_at: db.fn.now() })) > 0;
}

/** The credentials the NATS server accepts: not revoked, of a tenant that is not disabled. */
export async function usableBusCredentials(db: Knex): Promise<{ id: string; tenant_id: string; password_hash: string }[]> {
  return db('bus_credentials as c')
    .join('tenants as t', 't.id', 'c.tenant_id')
    .whereNull('c.revoked_at')
    .whereNull('t.disabled_at')
    .orderBy('c.id')
    .select('c.id', 'c.tenant_id', 'c.password_hash');
}
