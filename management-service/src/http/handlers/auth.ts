import type { OperationHandler } from '@platform/shared';
import { login, refresh, userToken } from '../../auth/sessions.ts';
import type { TokenSigner } from '../../auth/tokens.ts';
import type { Principal } from '../../domain/principal.ts';
import type { Knex } from 'knex';

const noStore = { 'Cache-Control': 'no-store' };

export function authHandlers(deps: { db: Knex; signer: TokenSigner; refreshTtlSeconds: number }): Record<string, OperationHandler<Principal>> {
  return {
    login: async ({ body }) => {
      const { access_key_id, secret_access_key } = body as { access_key_id: string; secret_access_key: string };
      return { status: 200, headers: noStore, body: await login(deps, access_key_id, secret_access_key) };
    },
    refreshToken: async ({ body }) => {
      const { refresh_token } = body as { refresh_token: string };
      return { status: 200, headers: noStore, body: await refresh(deps, refresh_token) };
    },
    createUserToken: async ({ body, principal }) => {
      const { user_id } = body as { user_id: string };
      return { status: 200, headers: noStore, body: await userToken(deps, principal, user_id) };
    },
    getJwks: async () => ({ status: 200, headers: { 'Cache-Control': 'public, max-age=300' }, body: deps.signer.jwks }),
  };
}
