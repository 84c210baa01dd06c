import type { Request } from 'express';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { ProblemError, isId } from '@platform/shared';
import type { Principal } from './principal.ts';
import type { TokenSigner } from './tokens.ts';

/** A 401 with the RFC 6750 challenge, so clients know to send a bearer token. */
const unauthenticated = (detail: string) =>
  new ProblemError(401, 'unauthenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="management"' } });

export type OidcSettings = { issuer: string; audience: string; jwksUrl: string; tenantClaim: string };

export type BearerAuthenticator = (req: Request) => Promise<Principal>;

/**
 * Verifies `Authorization: Bearer <jwt>`: tokens this service signed, and, when configured, tokens
 * of an external OpenID Connect issuer (tenant from a configured claim). The tenant must exist
 * and be enabled; that answer is cached for a few seconds.
 */
export function createBearerAuthenticator(options: {
  signer: TokenSigner;
  oidc?: OidcSettings;
  tenantIsActive: (tenantId: string) => Promise<boolean>;
  tenantCacheMs?: number;
}): BearerAuthenticator {
  const { signer, oidc } = options;
  const remoteKeys = oidc ? createRemoteJWKSet(new URL(oidc.jwksUrl)) : undefined;
  const tenantCache = new Map<string, { active: boolean; until: number }>();
  const cacheMs = options.tenantCacheMs ?? 10_000;

  const tenantIsActive = async (tenantId: string) => {
    const cached = tenantCache.get(tenantId);
    if (cached && cached.until > Date.now()) return cached.active;
    const active = await options.tenantIsActive(tenantId);
    if (tenantCache.size > 10_000) tenantCache.clear();
    tenantCache.set(tenantId, { active, until: Date.now() + cacheMs });
    return active;
  };

  const verify = async (token: string): Promise<Principal> => {
    let issuer: string | undefined;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      throw unauthenticated('The bearer token is not a JWT.');
    }
    if (issuer === signer.issuer) {
      const claims = await signer.verify(token).catch(() => {
        throw unauthenticated('The bearer token is expired or its signature does not verify.');
      });
      return { tenantId: claims.tenant_id, kind: claims.kind, subject: claims.sub };
    }
    if (oidc && remoteKeys && issuer === oidc.issuer) {
      const { payload } = await jwtVerify(token, remoteKeys, { issuer: oidc.issuer, audience: oidc.audience, requiredClaims: ['sub', 'exp'] }).catch(() => {
        throw unauthenticated('The bearer token is expired or its signature does not verify.');
      });
      const tenantId = payload[oidc.tenantClaim];
      if (typeof tenantId !== 'string') throw unauthenticated(`The bearer token carries no ${oidc.tenantClaim} claim.`);
      const subject = payload.sub!;
      return { tenantId, kind: isId('U', subject) ? 'user' : 'machine', subject };
    }
    throw unauthenticated('The bearer token comes from an issuer this service does not trust.');
  };

  // A verified token is remembered until it expires: clients send the same token for minutes,
  // and checking its signature again each time was a large share of a request's CPU.
  const verified = new Map<string, { principal: Principal; until: number }>();
  const verifyOnce = async (token: string): Promise<Principal> => {
    const hit = verified.get(token);
    if (hit && hit.until > Date.now()) return hit.principal;
    const principal = await verify(token);
    const exp = decodeJwt(token).exp;
    if (verified.size >= 10_000) verified.clear();
    if (exp) verified.set(token, { principal, until: exp * 1000 });
    return principal;
  };

  return async (req) => {
    const header = req.headers.authorization;
    const match = header?.match(/^Bearer ([A-Za-z0-9_.~+/=-]+)$/i);
    if (!match) throw unauthenticated('Send the header Authorization: Bearer <access token>; POST /auth/login/ issues one.');
    const principal = await verifyOnce(match[1]!);
    if (!(await tenantIsActive(principal.tenantId))) throw unauthenticated('The tenant of this token does not exist or is disabled.');
    return principal;
  };
}
