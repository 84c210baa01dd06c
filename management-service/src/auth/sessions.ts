import type { Knex } from 'knex';
import { isId, newUlid, unauthenticated } from '@platform/shared';
import { EntityNotFound } from '../domain/errors.ts';
import { mustBeMachine } from '../domain/permissions.ts';
import { findEntity } from '../store/entities.ts';
import { readInTenant } from '../store/tenant-scope.ts';
import type { Principal } from '../domain/principal.ts';
import { consumeRefreshToken, findUsableAccessKey, insertRefreshFamily, insertRefreshToken, revokeChainOfSpentToken } from '../store/credentials.ts';
import { randomToken, sha256, verifyNothing, verifySecret } from './secrets.ts';
import type { TokenSigner } from './tokens.ts';

export type TokenResponse = { access_token: string; token_type: 'Bearer'; expires_in: number; refresh_token: string };

type Sessions = { db: Knex; signer: TokenSigner; refreshTtlSeconds: number };

const accessToken = (s: Sessions, key: { id: string; tenant_id: string }, familyId: string) =>
  s.signer.sign({ sub: key.id, tenant_id: key.tenant_id, kind: 'machine', sid: familyId });

const tokenResponse = (s: Sessions, accessToken: string, refreshToken: string): TokenResponse => ({
  access_token: accessToken,
  token_type: 'Bearer',
  expires_in: s.signer.ttlSeconds,
  refresh_token: refreshToken,
});

const refreshExpiry = (s: Sessions) => new Date(Date.now() + s.refreshTtlSeconds * 1000);

/** Exchanges a machine client's access key for an access token and a refresh token that starts a new chain. */
export async function login(s: Sessions, accessKeyId: string, secret: string): Promise<TokenResponse> {
  const key = await findUsableAccessKey(s.db, accessKeyId);
  if (!key) {
    await verifyNothing();
    throw unauthenticated('Unknown access key or wrong secret.');
  }
  if (!(await verifySecret(secret, key.secret_hash))) throw unauthenticated('Unknown access key or wrong secret.');
  const familyId = newUlid();
  const refreshToken = randomToken();
  await s.db.transaction(async (trx) => {
    await insertRefreshFamily(trx, { id: familyId, access_key_id: key.id });
    await insertRefreshToken(trx, { token_hash: sha256(refreshToken), family_id: familyId, access_key_id: key.id, expires_at: refreshExpiry(s) });
  });
  return tokenResponse(s, await accessToken(s, key, familyId), refreshToken);
}

/**
 * Rotates a refresh token: the one given is spent and the next of its chain issued, in one
 * transaction. A token that was already used revokes its chain (reuse detection): the refresh
 * token its holder has now stops working too, and the chain's access tokens within
 * TOKEN_REVOCATION_CHECK_MS; the machine client logs in again with its access key.
 */
export async function refresh(s: Sessions, refreshToken: string): Promise<TokenResponse> {
  const tokenHash = sha256(refreshToken);
  const next = randomToken();
  // The revocation must commit, so the transaction returns instead of throwing the 401.
  const spent = await s.db.transaction(async (trx) => {
    const token = await consumeRefreshToken(trx, tokenHash);
    if (!token) {
      await revokeChainOfSpentToken(trx, tokenHash);
      return undefined;
    }
    await insertRefreshToken(trx, { token_hash: sha256(next), family_id: token.family_id, access_key_id: token.id, expires_at: refreshExpiry(s) });
    return token;
  });
  if (!spent) throw unauthenticated('The refresh token is unknown, expired, already used or revoked.');
  return tokenResponse(s, await accessToken(s, spent, spent.family_id), next);
}

/**
 * A token for one of the tenant's users (docs/adr/0005-auth-and-tokens.md): the machine client exchanges its own
 * token for one whose subject is the user, so readable_by / modifiable_by apply to it.
 */
export async function userToken(s: Sessions, principal: Principal, userId: string): Promise<Omit<TokenResponse, 'refresh_token'>> {
  mustBeMachine(principal, 'obtain tokens for users');
  const user = isId('U', userId)
    ? await readInTenant(s.db, principal.tenantId, (trx) => findEntity(trx, { tenantId: principal.tenantId, type: 'users', id: userId }))
    : undefined;
  if (!user || user.deleted) throw new EntityNotFound('user');
  return {
    // azp: revoking the access key that obtained it revokes this token too.
    access_token: await s.signer.sign({ sub: userId, tenant_id: principal.tenantId, kind: 'user', azp: principal.subject }),
    token_type: 'Bearer',
    expires_in: s.signer.ttlSeconds,
  };
}
