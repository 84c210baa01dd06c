import assert from 'node:assert/strict';
import { createLogger } from '@platform/shared';
import { freePort } from '@platform/dev-stack/ports';
import { testNatsUrl } from '@platform/test-support/database';
import { build } from '@platform/test-support/fixtures';
import { assertProblem, call } from '@platform/test-support/http';
import { startOwnPostgres, type OwnPostgres } from '@platform/test-support/own-postgres';
import { testSigningKey } from '@platform/test-support/platform';
import { createAccessKey, createTenant } from '../src/admin/provisioning.ts';
import { loadManagementConfig } from '../src/config.ts';
import { startManagementService, type RunningService } from '../src/service.ts';

/** A 503 `unavailable` problem that tells the client when to retry. */
function assertUnavailable(res: Awaited<ReturnType<typeof call>>): void {
  assertProblem(res, 503, 'unavailable');
  assert.equal(res.headers.get('retry-after'), '5');
}

describe('management service while Postgres does not answer', function () {
  this.timeout(120_000);
  const logger = createLogger('test', process.env.LOG_LEVEL ?? 'error');
  let postgres: OwnPostgres;
  let signingKey: string;
  const services: RunningService[] = [];
  let url: string;
  let token: string;

  const start = async (databaseUrl: string) => {
    const service = await startManagementService(
      loadManagementConfig({
        HOST: '127.0.0.1',
        PORT: '0',
        METRICS_PORT: '0',
        DATABASE_URL: databaseUrl,
        NATS_URL: testNatsUrl(),
        JWT_PRIVATE_KEY: signingKey,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
        MIGRATE_ON_START: 'false',
        OUTBOX_RELAY: 'false',
        EVENT_FORWARDERS: 'false',
        BROKER_SETTLEMENT: 'false',
      }),
      logger,
    );
    services.push(service);
    return service.url;
  };

  before(async () => {
    postgres = await startOwnPostgres();
    signingKey = await testSigningKey();
    url = await start(postgres.url);
    await createTenant(postgres.db, { id: 'pg-down' });
    const key = await createAccessKey(postgres.db, 'pg-down');
    const login = await call(`${url}/auth/login/`, { body: key });
    assert.equal(login.status, 200, login.text);
    token = login.body.access_token;
    // The token's tenant is checked now, while Postgres answers.
    assert.equal((await call(`${url}/users/`, { token })).status, 200);
    await postgres.stop();
  });
  after(async () => {
    for (const service of services) await service.stop();
    await postgres?.stop();
  });

  it('answers writes, reads and logins with 503 unavailable and Retry-After once the server has stopped', async () => {
    assertUnavailable(await call(`${url}/users/`, { token, body: build.user() }));
    assertUnavailable(await call(`${url}/users/`, { token, body: build.user(), headers: { 'idempotency-key': 'pg-down-1' } }));
    assertUnavailable(await call(`${url}/users/`, { token }));
    assertUnavailable(await call(`${url}/auth/login/`, { body: { access_key_id: 'A01J00000000000000000000000', secret_access_key: 'x' } }));
    const ready = await call(`${url}/readyz`);
    assertProblem(ready, 503, 'unavailable');
    assert.equal(ready.body.checks.postgres, 'failing');
  });

  it('answers 503 unavailable when the database URL names a port nobody listens on', async () => {
    const closed = new URL(postgres.url);
    closed.port = String(await freePort());
    const other = await start(closed.toString());
    // The same signing key: the token verifies, and the tenant check needs the database.
    assertUnavailable(await call(`${other}/users/`, { token, body: build.user() }));
    assertUnavailable(await call(`${other}/auth/login/`, { body: { access_key_id: 'A01J00000000000000000000000', secret_access_key: 'x' } }));
  });
});
