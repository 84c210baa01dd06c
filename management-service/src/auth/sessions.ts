import type { Knex } from 'knex';
import { isId, unauthenticated } from '@platform/shared';
import { EntityNotFound } from '../domain/errors.ts';
import { mustBeMachine } from '../domain/permissions.ts';
import { findEntity } from '../store/entities.ts';
import { inTenant } from '../store/tenant-scope.ts';
import type { Principal } from './principal.ts';
import { consumeRefreshToken, findUsableAccessKey, insertRefreshToken } from '../store/credentials.ts';
import { randomToken, sha256, verifyNothing, verifySecret } from './secrets.ts';
import type { TokenSigner } from './tokens.ts';

export type TokenResponse = { access_token: string; token_type: 'Bearer'; expires_in: number; refresh_token: string };

type Sessions = { db: Knex; signer: TokenSigner; refreshTtlSeconds: number };

async function issue(s: Sessions, key: { id: string; tenant_id: string }): Promise<TokenResponse> {
  const refresh = randomToken();
  await insertRefreshToken(s.db, { token_hash: sha256(refresh), access_key_id: key.id, expires_at: new Date(Date.now() + s.refreshTtlSeconds * 1000) });
  return {
    access_token: await s.signer.sign({ sub: key.id, tenant_id: key.tenant_id, kind: 'machine' }),
    token_type: 'Bearer',
    expires_in: s.signer.ttlSeconds,
    refresh_token: refresh,
  };
}

/** Exchanges a machine client's access key for an access token and a refresh token. */
export async function login(s: Sessions, accessKeyId: string, secret: string): Promise<TokenResponse> {
  const key = await findUsableAccessKey(s.db, accessKeyId);
  if (!key) {
    await verifyNothing();
    throw unauthenticated('Unknown access key or wrong secret.');
  }
  if (!(await verifySecret(secret, key.secret_hash))) throw unauthenticated('Unknown access key or wrong secret.');
  return issue(s, key);
}

/** Rotates a refresh token: the one given is spent, a new pair is issued. */
export async function refresh(s: Sessions, refreshToken: string): Promise<TokenResponse> {
  const key = await consumeRefreshToken(s.db, sha256(refreshToken));
  if (!key) throw unauthenticated('The refresh token is unknown, expired, already used or revoked.');
  return issue(s, key);
}

/**
 * A token for one of the tenant's users (decisions §3): the machine client exchanges its own
 * token for one whose subject is the user, so readable_by / modifiable_by apply to it.
 */
export async function userToken(s: Sessions, principal: Principal, userId: string): Promise<Omit<TokenResponse, 'refresh_token'>> {
  mustBeMachine(principal, 'obtain tokens for users');
  const user = isId('U', userId)
    ? await inTenant(s.db, principal.tenantId, (trx) => findEntity(trx, { tenantId: principal.tenantId, type: 'users', id: userId }))
    : undefined;
  if (!user || user.deleted) throw new EntityNotFound('user');
  return {
    access_token: await s.signer.sign({ sub: userId, tenant_id: principal.tenantId, kind: 'user' }),
    token_type: 'Bearer',
    expires_in: s.signer.ttlSeconds,
  };
}
