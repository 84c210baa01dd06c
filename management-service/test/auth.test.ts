import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { SignJWT, createLocalJWKSet, decodeJwt, exportJWK, generateKeyPair, importPKCS8, jwtVerify } from 'jose';
import { revokeAccessKey } from '../src/store/credentials.ts';
import { call, assertProblem } from '@platform/test-support/http';
import { startTestPlatform, testSigningKey, type TestPlatform, type TestTenant } from '@platform/test-support/platform';

describe('management authentication', () => {
  let platform: TestPlatform;
  let tenant: TestTenant;
  let signingKey: string;
  const url = (path: string) => platform.managementUrl + path;
  const login = (t: TestTenant) => call(url('/auth/login/'), { body: { access_key_id: t.accessKeyId, secret_access_key: t.secret } });

  before(async () => {
    signingKey = await testSigningKey();
    platform = await startTestPlatform({ JWT_PRIVATE_KEY: signingKey });
    tenant = await platform.tenant();
  });
  after(() => platform.stop());

  it('logs a machine client in with its access key: ES256 token of 300 s verifiable with the JWKS', async () => {
    const res = await login(tenant);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal(res.body.expires_in, 300);
    assert.ok(res.body.refresh_token.length >= 40);
    const jwks = await call(url('/.well-known/jwks.json'));
    assert.equal(jwks.status, 200);
    assert.equal(jwks.body.keys[0].alg, 'ES256');
    assert.equal(jwks.body.keys[0].d, undefined, 'the JWKS must not publish the private part');
    const { payload, protectedHeader } = await jwtVerify(res.body.access_token, createLocalJWKSet(jwks.body));
    assert.equal(protectedHeader.alg, 'ES256');
    assert.equal(payload.tenant_id, tenant.tenantId);
    assert.equal(payload.sub, tenant.accessKeyId);
    assert.equal(payload.exp! - payload.iat!, 300);
  });

  it('refuses a wrong secret and an unknown key alike', async () => {
    assertProblem(await login({ ...tenant, secret: 'wrong' }), 401, 'unauthenticated');
    assertProblem(await login({ ...tenant, accessKeyId: 'A01J00000000000000000000000' }), 401, 'unauthenticated');
  });

  it('answers a login body that violates the contract with 422 and the field', async () => {
    const res = await call(url('/auth/login/'), { body: { access_key_id: tenant.accessKeyId } });
    assertProblem(res, 422, 'validation_failed');
    assert.deepEqual(res.body.errors[0].loc, ['body', 'secret_access_key']);
  });

  it('rotates refresh tokens: a spent one is refused', async () => {
    const first = (await login(tenant)).body;
    const second = await call(url('/auth/refresh-token/'), { body: { refresh_token: first.refresh_token } });
    assert.equal(second.status, 200);
    assert.notEqual(second.body.refresh_token, first.refresh_token);
    assert.equal(decodeJwt(second.body.access_token).tenant_id, tenant.tenantId);
    assertProblem(await call(url('/auth/refresh-token/'), { body: { refresh_token: first.refresh_token } }), 401, 'unauthenticated');
  });

  it('lets exactly one of two concurrent refreshes with the same token through', async () => {
    const { refresh_token } = (await login(tenant)).body;
    const results = await Promise.all([1, 2].map(() => call(url('/auth/refresh-token/'), { body: { refresh_token } })));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 401]);
  });

  it('stops a revoked access key from logging in and refreshing', async () => {
    const other = await platform.tenant();
    const { refresh_token } = (await login(other)).body;
    assert.ok(await revokeAccessKey(platform.database.db, other.accessKeyId));
    assertProblem(await login(other), 401, 'unauthenticated');
    assertProblem(await call(url('/auth/refresh-token/'), { body: { refresh_token } }), 401, 'unauthenticated');
  });

  describe('bearer tokens on the routes', () => {
    const route = () => url('/users/');

    it('refuse a missing, malformed or garbage token', async () => {
      const missing = await call(route());
      assertProblem(missing, 401, 'unauthenticated');
      assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="management"');
      assertProblem(await call(route(), { headers: { authorization: 'Basic abc' } }), 401, 'unauthenticated');
      assertProblem(await call(route(), { token: 'not-a-jwt' }), 401, 'unauthenticated');
    });

    it('refuse a tampered token', async () => {
      const token: string = (await login(tenant)).body.access_token;
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const forged = Buffer.from(JSON.stringify({ ...claims, tenant_id: 'someone-else' })).toString('base64url');
      assertProblem(await call(route(), { token: `${header}.${forged}.${signature}` }), 401, 'unauthenticated');
    });

    it('refuse an expired token and one signed by another key', async () => {
      const sign = async (pem: string, exp: number) =>
        new SignJWT({ tenant_id: tenant.tenantId, kind: 'machine' })
          .setProtectedHeader({ alg: 'ES256' })
          .setIssuer('investment-platform')
          .setSubject(tenant.accessKeyId)
          .setIssuedAt(exp - 300)
          .setExpirationTime(exp)
          .sign(await importPKCS8(pem, 'ES256'));
      const now = Math.floor(Date.now() / 1000);
      assertProblem(await call(route(), { token: await sign(signingKey, now - 10) }), 401, 'unauthenticated');
      assertProblem(await call(route(), { token: await sign(await testSigningKey(), now + 300) }), 401, 'unauthenticated');
      const valid = await call(route(), { token: await sign(signingKey, now + 300) });
      assert.notEqual(valid.status, 401);
    });

    it('let a valid token through to the operation', async () => {
      const token = (await login(tenant)).body.access_token;
      const res = await call(route(), { token });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.count, 0);
    });
  });

  describe('an external OpenID Connect issuer', () => {
    let jwksServer: Server;
    let oidcPlatform: TestPlatform;
    let oidcKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
    let issuer: string;

    before(async () => {
      const pair = await generateKeyPair('ES256');
      oidcKey = pair.privateKey;
      const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' };
      jwksServer = createServer((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
      await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
      issuer = `http://127.0.0.1:${(jwksServer.address() as { port: number }).port}`;
      oidcPlatform = await startTestPlatform({ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'platform', OIDC_JWKS_URL: `${issuer}/jwks`, OIDC_TENANT_CLAIM: 'org' });
    });
    after(async () => {
      await oidcPlatform.stop();
      jwksServer.close();
    });

    const token = (claims: Record<string, unknown>, audience = 'platform') =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject('svc-1')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(oidcKey);

    it('accepts its tokens for an existing tenant named in the configured claim', async () => {
      const t = await oidcPlatform.tenant();
      const res = await call(`${oidcPlatform.managementUrl}/users/`, { token: await token({ org: t.tenantId }) });
      assert.equal(res.status, 200, res.text);
    });

    it('refuses a wrong audience, a missing tenant claim and an unknown tenant', async () => {
      const t = await oidcPlatform.tenant();
      const at = `${oidcPlatform.managementUrl}/users/`;
      assertProblem(await call(at, { token: await token({ org: t.tenantId }, 'other') }), 401, 'unauthenticated');
      assertProblem(await call(at, { token: await token({}) }), 401, 'unauthenticated');
      assertProblem(await call(at, { token: await token({ org: 'no-such-tenant' }) }), 401, 'unauthenticated');
    });
  });
});
