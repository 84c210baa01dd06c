import type { Knex } from 'knex';

export type Tenant = { id: string; name: string; broker_integration: 'CLIENT' | 'SERVICE'; created_at: Date; disabled_at: Date | null };

export async function insertTenant(db: Knex, tenant: { id: string; name: string; broker_integration: Tenant['broker_integration'] }): Promise<Tenant> {
  const [row] = await db('tenants').insert(tenant).returning('*');
  return row as Tenant;
}

export async function listTenants(db: Knex): Promise<Tenant[]> {
  return db('tenants').select('*').orderBy('id');
}

/** The tenant when it exists and is not disabled. */
export async function findActiveTenant(db: Knex, id: string): Promise<Tenant | undefined> {
  return db('tenants').where({ id }).whereNull('disabled_at').first();
}

export async function insertAccessKey(db: Knex, key: { id: string; tenant_id: string; secret_hash: string; description?: string }): Promise<void> {
  await db('access_keys').insert(key);
}

/** A usable access key: not revoked, of a tenant that is not disabled. */
export async function findUsableAccessKey(db: Knex, id: string): Promise<{ id: string; tenant_id: string; secret_hash: string } | undefined> {
  return db('access_keys as k')
    .join('tenants as t', 't.id', 'k.tenant_id')
    .where('k.id', id)
    .whereNull('k.revoked_at')
    .whereNull('t.disabled_at')
    .first('k.id', 'k.tenant_id', 'k.secret_hash');
}

export async function revokeAccessKey(db: Knex, id: string): Promise<boolean> {
  return (await db('access_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: db.fn.now() })) > 0;
}

export async function insertRefreshToken(db: Knex, token: { token_hash: Buffer; access_key_id: string; expires_at: Date }): Promise<void> {
  await db('refresh_tokens').insert(token);
}

/**
 * Marks a refresh token used and returns its access key, in one statement so that two concurrent
 * refreshes with the same token cannot both succeed (tokens rotate on every use).
 */
export async function consumeRefreshToken(db: Knex, tokenHash: Buffer): Promise<{ id: string; tenant_id: string } | undefined> {
  const result = await db.raw(
    `update refresh_tokens r set used_at = now()
       from access_keys k join tenants t on t.id = k.tenant_id
      where r.token_hash = ? and r.used_at is null and r.expires_at > now()
        and k.id = r.access_key_id and k.revoked_at is null and t.disabled_at is null
      returning k.id, k.tenant_id`,
    [tokenHash],
  );
  return result.rows[0];
}

export async function insertApiKey(db: Knex, key: { id: string; tenant_id: string; key_hash: Buffer; description?: string }): Promise<void> {
  await db('api_keys').insert(key);
}

export async function revokeApiKey(db: Knex, id: string): Promise<boolean> {
  return (await db('api_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: db.fn.now() })) > 0;
}
