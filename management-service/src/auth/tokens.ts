import { createPublicKey } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, importPKCS8, jwtVerify, type JWK, type JWTPayload, type CryptoKey } from 'jose';

export type PrincipalKind = 'machine' | 'user';

/**
 * What an access token says besides its lifetime: whose it is, and the credentials it stems from,
 * each of which can be revoked: `sid` the refresh-token chain of a machine client's login, `azp`
 * the access key of the machine client that obtained a user's token.
 */
export type TokenSubject = { sub: string; tenant_id: string; kind: PrincipalKind; sid?: string; azp?: string };

/** Claims of the access tokens this service signs. */
export type AccessClaims = JWTPayload & TokenSubject;

export type TokenSigner = {
  issuer: string;
  ttlSeconds: number;
  jwks: { keys: JWK[] };
  sign: (claims: TokenSubject) => Promise<string>;
  verify: (token: string) => Promise<AccessClaims>;
};

/** ES256 signer and verifier around the configured private key; its public key is the JWKS. */
export async function createTokenSigner(privateKeyPem: string, issuer: string, ttlSeconds: number): Promise<TokenSigner> {
  const privateKey: CryptoKey = await importPKCS8(privateKeyPem, 'ES256');
  const publicJwk = await exportJWK(createPublicKey(privateKeyPem));
  const kid = await calculateJwkThumbprint(publicJwk);
  const jwk: JWK = { ...publicJwk, kid, alg: 'ES256', use: 'sig' };
  const publicKey = createPublicKey(privateKeyPem);
  return {
    issuer,
    ttlSeconds,
    jwks: { keys: [jwk] },
    sign: (claims) =>
      new SignJWT({ tenant_id: claims.tenant_id, kind: claims.kind, ...(claims.sid ? { sid: claims.sid } : {}), ...(claims.azp ? { azp: claims.azp } : {}) })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setSubject(claims.sub)
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .sign(privateKey),
    verify: async (token) => {
      const { payload } = await jwtVerify(token, publicKey, { issuer, algorithms: ['ES256'], requiredClaims: ['sub', 'exp', 'tenant_id', 'kind'] });
      if (typeof payload.tenant_id !== 'string' || (payload.kind !== 'machine' && payload.kind !== 'user')) throw new Error('bad claims');
      if ((payload.sid !== undefined && typeof payload.sid !== 'string') || (payload.azp !== undefined && typeof payload.azp !== 'string'))
        throw new Error('bad claims');
      return payload as AccessClaims;
    },
  };
}
