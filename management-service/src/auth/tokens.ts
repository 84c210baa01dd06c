import { createPublicKey } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, importPKCS8, jwtVerify, type JWK, type JWTPayload, type CryptoKey } from 'jose';

export type PrincipalKind = 'machine' | 'user';

/** Claims of the access tokens this service signs. */
export type AccessClaims = JWTPayload & { sub: string; tenant_id: string; kind: PrincipalKind };

export type TokenSigner = {
  issuer: string;
  ttlSeconds: number;
  jwks: { keys: JWK[] };
  sign: (claims: { sub: string; tenant_id: string; kind: PrincipalKind }) => Promise<string>;
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
      new SignJWT({ tenant_id: claims.tenant_id, kind: claims.kind })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setSubject(claims.sub)
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .sign(privateKey),
    verify: async (token) => {
      const { payload } = await jwtVerify(token, publicKey, { issuer, algorithms: ['ES256'], requiredClaims: ['sub', 'exp', 'tenant_id', 'kind'] });
      if (typeof payload.tenant_id !== 'string' || (payload.kind !== 'machine' && payload.kind !== 'user')) throw new Error('bad claims');
      return payload as AccessClaims;
    },
  };
}
