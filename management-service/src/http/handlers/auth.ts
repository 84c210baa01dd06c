import { ProblemError, type OperationHandler } from '@platform/shared';
import type { LoginThrottle } from '../../auth/login-throttle.ts';
import { login, refresh, userToken } from '../../auth/sessions.ts';
import type { TokenSigner } from '../../auth/tokens.ts';
import type { Principal } from '../../domain/principal.ts';
import type { Knex } from 'knex';

const noStore = { 'Cache-Control': 'no-store' };

export function authHandlers(deps: {
  db: Knex;
  signer: TokenSigner;
  refreshTtlSeconds: number;
  loginThrottle?: LoginThrottle;
}): Record<string, OperationHandler<Principal>> {
  return {
    login: async ({ body, req }) => {
      const { access_key_id, secret_access_key } = body as { access_key_id: string; secret_access_key: string };
      const address = req.ip ?? '';
      await deps.loginThrottle?.refuseWhileBlocked(access_key_id, address);
      let tokens;
      try {
        tokens = await login(deps, access_key_id, secret_access_key);
      } catch (error) {
        if (error instanceof ProblemError && error.status === 401) await deps.loginThrottle?.failed(access_key_id, address);
        throw error;
      }
      await deps.loginThrottle?.succeeded(access_key_id, address);
      return { status: 200, headers: noStore, body: tokens };
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
