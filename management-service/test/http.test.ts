import assert from 'node:assert/strict';
import { connectNats, createLogger, jetstreamManager, listen, streams } from '@platform/shared';
import { createTokenSigner } from '../src/auth/tokens.ts';
import { createBearerAuthenticator } from '../src/auth/authenticate.ts';
import { createManagementApp } from '../src/http/app.ts';
import { createDb } from '../src/store/db.ts';
import { call, assertProblem } from '@platform/test-support/http';
import { startTestPlatform, testSigningKey, type TestPlatform } from '@platform/test-support/platform';
import { testNatsUrl } from '@platform/test-support/database';

describe('management HTTP behaviour', () => {
  let platform: TestPlatform;
  const url = (path: string) => platform.managementUrl + path;
  const loginBody = { access_key_id: 'A01J00000000000000000000000', secret_access_key: 'x' };

  before(async () => {
    platform = await startTestPlatform();
  });
  after(() => platform.stop());

  it('answers /livez, and /readyz with the state of Postgres (NATS is not part of it)', async () => {
    // With the build it runs (no image here: the revision is unknown).
    assert.deepEqual((await call(url('/livez'))).body, { status: 'ok', version: '0.1.0', revision: 'unknown', node: process.versions.node });
    const ready = await call(url('/readyz'));
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body.checks, { postgres: 'ok' });
  });

  it('stays ready while NATS is away: the outbox keeps the events', async () => {
    const signer = await createTokenSigner(await testSigningKey(), 'investment-platform', 300);
    const logger = createLogger('test', 'error');
    const nats = await connectNats(testNatsUrl(), 'readiness-without-nats');
    await nats.close();
    const app = await createManagementApp({
      db: platform.database.db,
      nats,
      signer,
      authenticate: createBearerAuthenticator({ signer, revocations: { get: async () => ({ active: true, revoked: new Set() }) } }),
      logger,
      bodyLimitBytes: 1024,
      refreshTtlSeconds: 60,
      idempotency: { retentionDays: 7, waitMs: 1000 },
    });
    const server = await listen(app, '127.0.0.1', 0, 1000, logger);
    try {
      const res = await call(`${server.url}/readyz`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.checks, { postgres: 'ok' });
    } finally {
      await server.close();
    }
  });

  it('creates the JetStream streams of the contracts at start', async () => {
    const nc = await connectNats(testNatsUrl(), 'streams-test');
    try {
      const jsm = await jetstreamManager(nc);
      for (const stream of Object.values(streams)) {
        const info = await jsm.streams.info(stream.name);
        assert.deepEqual(info.config.subjects, [...stream.subjects]);
        assert.equal(info.config.max_age, stream.maxAgeMs * 1_000_000);
      }
    } finally {
      await nc.close();
    }
  });

  it('answers an unknown route with a 404 problem and a wrong method with 405', async () => {
    assertProblem(await call(url('/no-such-thing/')), 404, 'not_found');
    assertProblem(await call(url('/auth/login/'), { method: 'GET' }), 405, 'method_not_allowed');
  });

  it('answers malformed JSON with 400, another media type with 415, an oversized body with 413', async () => {
    const headers = { 'content-type': 'application/json' };
    assertProblem(await call(url('/auth/login/'), { rawBody: '{"access_key_id": ', headers }), 400, 'malformed_json');
    assertProblem(
      await call(url('/auth/login/'), { rawBody: 'access_key_id=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
    const big = JSON.stringify({ ...loginBody, padding: 'x'.repeat(1_100_000) });
    assertProblem(await call(url('/auth/login/'), { rawBody: big, headers }), 413, 'payload_too_large');
  });

  it('lists every contract violation with its location', async () => {
    const res = await call(url('/auth/login/'), { body: { access_key_id: 7, extra: true } });
    assertProblem(res, 422, 'validation_failed');
    const locs = res.body.errors.map((e: { loc: string[] }) => e.loc.join('.')).sort();
    assert.deepEqual(locs, ['body.access_key_id', 'body.extra', 'body.secret_access_key']);
  });

  it('accepts a path with or without its trailing slash', async () => {
    assertProblem(await call(url('/auth/login'), { body: loginBody }), 401, 'unauthenticated');
    assertProblem(await call(url('/auth/login/'), { body: loginBody }), 401, 'unauthenticated');
  });

  it('echoes a given X-Request-Id, makes one otherwise, and names it in problems', async () => {
    const given = await call(url('/nope'), { headers: { 'x-request-id': 'req-123' } });
    assert.equal(given.headers.get('x-request-id'), 'req-123');
    assert.equal(given.body.request_id, 'req-123');
    const made = await call(url('/livez'));
    assert.match(made.headers.get('x-request-id')!, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('reports not ready (503) while Postgres does not answer', async () => {
    const deadDb = createDb('postgres://nobody:x@127.0.0.1:1/none', 1);
    const signer = await createTokenSigner(await testSigningKey(), 'investment-platform', 300);
    const logger = createLogger('test', 'error');
    const nats = await connectNats(testNatsUrl(), 'readiness-test');
    const app = await createManagementApp({
      db: deadDb,
      nats,
      signer,
      authenticate: createBearerAuthenticator({ signer, revocations: { get: async () => ({ active: true, revoked: new Set() }) } }),
      logger,
      bodyLimitBytes: 1024,
      refreshTtlSeconds: 60,
      idempotency: { retentionDays: 7, waitMs: 1000 },
    });
    const server = await listen(app, '127.0.0.1', 0, 1000, logger);
    try {
      const res = await call(`${server.url}/readyz`);
      assertProblem(res, 503, 'unavailable');
      assert.deepEqual(res.body.checks, { postgres: 'failing' });
    } finally {
      await server.close();
      await deadDb.destroy();
      await nats.close();
    }
  });
});
