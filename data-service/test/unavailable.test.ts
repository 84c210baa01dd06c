import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createLogger, newUlid } from '@platform/shared';
import { freePort } from '@platform/dev-stack/ports';
import { testNatsUrl, testWorkDir } from '@platform/test-support/database';
import { assertProblem, call } from '@platform/test-support/http';
import { startOwnPostgres, type OwnPostgres } from '@platform/test-support/own-postgres';
import { createApiKey, createTenant } from '@platform/dev-stack/tenants';
import { loadDataConfig } from '../src/config.ts';
import { startDataService, type RunningService } from '../src/service.ts';

const BATCH = '/data/custom/reference/batch/';
const batch = (value: number) => ({ data: [{ instrument_id: 'US0378331005', reference_data: { esg_score: value } }] });

/** A 503 `unavailable` problem that tells the client when to retry. */
function assertUnavailable(res: Awaited<ReturnType<typeof call>>): void {
  assertProblem(res, 503, 'unavailable');
  assert.equal(res.headers.get('retry-after'), '5');
}

describe('data service while Postgres does not answer', function () {
  this.timeout(120_000);
  const logger = createLogger('test', process.env.LOG_LEVEL ?? 'error');
  let postgres: OwnPostgres;
  const services: RunningService[] = [];
  let url: string;
  let headers: Record<string, string>;

  const start = async (databaseUrl: string) => {
    const service = await startDataService(
      loadDataConfig({
        HOST: '127.0.0.1',
        PORT: '0',
        DATABASE_URL: databaseUrl,
        NATS_URL: testNatsUrl(),
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
        DUCKDB_PATH: join(testWorkDir(), `data-${newUlid()}.duckdb`),
        REFERENCE_DIR: join(testWorkDir(), 'reference'),
        // The key and the tenant's state stay cached: the write itself is what needs Postgres.
        API_KEY_CACHE_MS: '600000',
        TOKEN_REVOCATION_CHECK_MS: '60000',
        // Never degraded: what a replica answers when it may not serve from its cache (degraded.test.ts for the rest).
        DEGRADED_MAX_MS: '0',
        // Two services in one process: each its own metrics port.
        METRICS_PORT: '0',
        OPTIMIZER: 'false',
      }),
      logger,
    );
    services.push(service);
    return service.url;
  };

  before(async () => {
    postgres = await startOwnPostgres();
    url = await start(postgres.url);
    await createTenant(postgres.db, { id: 'pg-down' });
    const key = await createApiKey(postgres.db, 'pg-down');
    headers = { 'x-tenant-id': 'pg-down', 'x-api-key': key.api_key };
    const warm = await call(`${url}${BATCH}`, { body: batch(1), headers });
    assert.equal(warm.status, 200, warm.text);
    await postgres.stop();
  });
  after(async () => {
    for (const service of services) await service.stop();
    await postgres?.stop();
  });

  it('answers a custom-data write with 503 unavailable and Retry-After once the server has stopped, and keeps running', async () => {
    assertUnavailable(await call(`${url}${BATCH}`, { body: batch(2), headers }));
    assertUnavailable(await call(`${url}${BATCH}`, { body: batch(3), headers: { ...headers, 'idempotency-key': 'pg-down-1' } }));
    const ready = await call(`${url}/readyz`);
    assertProblem(ready, 503, 'unavailable');
    assert.equal(ready.body.checks.postgres, 'failing');
    assert.deepEqual((await call(`${url}/livez`)).body, { status: 'ok', version: '0.1.0', revision: 'unknown', node: process.versions.node });
  });

  it('answers 503 unavailable when the database URL names a port nobody listens on (the API key cannot be checked)', async () => {
    const closed = new URL(postgres.url);
    closed.port = String(await freePort());
    const other = await start(closed.toString());
    assertUnavailable(await call(`${other}${BATCH}`, { body: batch(4), headers }));
  });
});
