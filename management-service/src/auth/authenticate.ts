import type { Request } from 'express';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { ProblemError, isId, type RevocationCache } from '@platform/shared';
import type { Principal } from '../domain/principal.ts';
import type { TokenSigner } from './tokens.ts';

/** A 401 with the RFC 6750 challenge, so clients know to send a bearer token. */
const unauthenticated = (detail: string) => new ProblemError(401, 'unauthenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="management"' } });

export type OidcSettings = { issuer: string; audience: string; jwksUrl: string; tenantClaim: string };

export type BearerAuthenticator = (req: Request) => Promise<Principal>;

/** A verified token: who calls, and the credential ids whose revocation ends the token. */
type Verified = { principal: Principal; revocable: string[] };

/**
 * Verifies `Authorization: Bearer <jwt>`: tokens this service signed, and, when configured, tokens
 * of an external OpenID Connect issuer (tenant from a configured claim). Then the tenant must
 * exist and be enabled, and none of the token's credentials (its subject, `sid`, `azp`) may be
 * revoked; both come from `revocations`, which reads each tenant at most once per
 * TOKEN_REVOCATION_CHECK_MS, so a revocation takes effect within that bound without a database
 * read per request.
 */
export function createBearerAuthenticator(options: { signer: TokenSigner; oidc?: OidcSettings; revocations: RevocationCache }): BearerAuthenticator {
  const { signer, oidc, revocations } = options;
  const remoteKeys = oidc ? createRemoteJWKSet(new URL(oidc.jwksUrl)) : undefined;

  const verify = async (token: string): Promise<Verified> => {
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
      const revocable = [claims.sub, claims.sid, claims.azp].filter((id): id is string => id !== undefined);
      return { principal: { tenantId: claims.tenant_id, kind: claims.kind, subject: claims.sub }, revocable };
    }
    if (oidc && remoteKeys && issuer === oidc.issuer) {
      const { payload } = await jwtVerify(token, remoteKeys, { issuer: oidc.issuer, audience: oidc.audience, requiredClaims: ['sub', 'exp'] }).catch(() => {
        throw unauthenticated('The bearer token is expired or its signature does not verify.');
      });
      const tenantId = payload[oidc.tenantClaim];
      if (typeof tenantId !== 'string') throw unauthenticated(`The bearer token carries no ${oidc.tenantClaim} claim.`);
      const subject = payload.sub!;
      return { principal: { tenantId, kind: isId('U', subject) ? 'user' : 'machine', subject }, revocable: [subject] };
    }
    throw unauthenticated('The bearer token comes from an issuer this service does not trust.');
  };

  // A verified token is remembered until it expires: clients send the same token for minutes,
  // and checking its signature again each time was a large share of a request's CPU.
  // Revocation is checked on every use, after this cache.
  const verified = new Map<string, Verified & { until: number }>();
  const verifyOnce = async (token: string): Promise<Verified> => {
    const hit = verified.get(token);
    if (hit && hit.until > Date.now()) return hit;
    const result = await verify(token);
    const exp = decodeJwt(token).exp;
    if (verified.size >= 10_000) verified.clear();
    if (exp) verified.set(token, { ...result, until: exp * 1000 });
    return result;
  };

  return async (req) => {
    const header = req.headers.authorization;
    const match = header?.match(/^Bearer ([A-Za-z0-9_.~+/=-]+)$/i);
    if (!match) throw unauthenticated('Send the header Authorization: Bearer <access token>; POST /auth/login/ issues one.');
    const { principal, revocable } = await verifyOnce(match[1]!);
    const tenant = await revocations.get(principal.tenantId);
    if (!tenant.active) throw unauthenticated('The tenant of this token does not exist or is disabled.');
    if (revocable.some((id) => tenant.revoked.has(id))) {
      throw unauthenticated('This token has been revoked (its access key was revoked, its user deleted or its refresh-token chain ended); obtain a new one.');
    }
    return principal;
  };
}
