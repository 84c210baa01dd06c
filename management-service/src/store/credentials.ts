import type { Knex } from 'knex';
import { insertRevocation } from './token-revocations.ts';

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

/**
 * Revokes an access key, in one transaction with what ends its sessions at once: its refresh-token
 * chains, and a revocation row that makes every replica refuse its access tokens (and the user
 * tokens it obtained) within TOKEN_REVOCATION_CHECK_MS.
 */
export async function revokeAccessKey(db: Knex, id: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const [key] = await trx('access_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() }).returning('tenant_id');
    if (!key) return false;
    await trx('refresh_token_families')
      .where({ access_key_id: id })
      .whereNull('revoked_at')
      .update({ revoked_at: trx.fn.now(), revoked_reason: 'access_key_revoked' });
    await insertRevocation(trx, { tenant_id: key.tenant_id, subject: id, reason: 'access_key_revoked' });
    return true;
  });
}

/** Starts a refresh-token chain for a login. */
export async function insertRefreshFamily(db: Knex | Knex.Transaction, family: { id: string; access_key_id: string }): Promise<void> {
  await db('refresh_token_families').insert(family);
}

export async function insertRefreshToken(
  db: Knex | Knex.Transaction,
  token: { token_hash: Buffer; family_id: string; access_key_id: string; expires_at: Date },
): Promise<void> {
  await db('refresh_tokens').insert(token);
}

export type SpentRefreshToken = { id: string; tenant_id: string; family_id: string };

/**
 * Marks a refresh token used and returns its access key and chain, in one statement so that two
 * concurrent refreshes with the same token cannot both succeed (tokens rotate on every use): the
 * second waits for the first's row lock and then finds the token used.
 */
export async function consumeRefreshToken(db: Knex | Knex.Transaction, tokenHash: Buffer): Promise<SpentRefreshToken | undefined> {
  const result = await db.raw(
    `update refresh_tokens r set used_at = now()
       from refresh_token_families f, access_keys k join tenants t on t.id = k.tenant_id
      where r.token_hash = ? and r.used_at is null and r.expires_at > now()
        and f.id = r.family_id and f.revoked_at is null
        and k.id = r.access_key_id and k.revoked_at is null and t.disabled_at is null
      returning k.id, k.tenant_id, r.family_id`,
    [tokenHash],
  );
  return result.rows[0];
}

/**
 * When `tokenHash` names a refresh token that was already used, revokes its chain (whoever
 * replays a spent token, thief or holder, ends it for both) and the chain's access tokens.
 * Returns the chain revoked now, if any.
 */
export async function revokeChainOfSpentToken(trx: Knex.Transaction, tokenHash: Buffer): Promise<{ family_id: string; tenant_id: string } | undefined> {
  const { rows } = await trx.raw(
    `update refresh_token_families f set revoked_at = now(), revoked_reason = 'refresh_token_reuse'
       from refresh_tokens r, access_keys k
      where r.token_hash = ? and r.used_at is not null and f.id = r.family_id and f.revoked_at is null and k.id = f.access_key_id
      returning f.id as family_id, k.tenant_id`,
    [tokenHash],
  );
  const chain = rows[0] as { family_id: string; tenant_id: string } | undefined;
  if (chain) await insertRevocation(trx, { tenant_id: chain.tenant_id, subject: chain.family_id, reason: 'refresh_token_reuse' });
  return chain;
}

export async function insertApiKey(db: Knex, key: { id: string; tenant_id: string; key_hash: Buffer; description?: string }): Promise<void> {
  await db('api_keys').insert(key);
}

export async function revokeApiKey(db: Knex, id: string): Promise<boolean> {
  return (await db('api_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: db.fn.now() })) > 0;
}
