import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createLogger, newUlid } from '@platform/shared';
import { createApiKey, setTenantRateLimits } from '@platform/dev-stack/tenants';
import { testWorkDir } from '@platform/test-support/database';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { loadDataConfig } from '../src/config.ts';
import { startDataService, type RunningService } from '../src/service.ts';
import { dataClient } from './support/data-client.ts';

type Answer = Awaited<ReturnType<typeof call>>;

const KEYS = '/data/custom/reference/query/';
const BATCH = '/data/custom/reference/batch/';

function rateLimitOf(res: Answer): { policy: string; remaining: number; reset: number } {
  const policy = res.headers.get('ratelimit-policy');
  const match = /^limit=(\d+), remaining=(\d+), reset=(\d+)$/.exec(res.headers.get('ratelimit') ?? '');
  assert.ok(policy && match, `RateLimit headers missing or malformed (status ${res.status})`);
  assert.equal(match[1], policy.split(';')[0]);
  return { policy, remaining: Number(match[2]), reset: Number(match[3]) };
}

function assertRateLimited(res: Answer): void {
  assertProblem(res, 429, 'rate_limited');
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${res.headers.get('retry-after')}`);
  assert.equal(rateLimitOf(res).remaining, 0);
}

/** Each API key of the data interface has its budget, shared by every replica, per tenant. */
describe('data service rate limits per API key', () => {
  let platform: TestPlatform;
  const env = { RATE_LIMIT_API_KEY: '4', TOKEN_REVOCATION_CHECK_MS: '0', METRICS_PORT: '0' };

  before(async function () {
    this.timeout(60_000);
    platform = await startTestPlatform(env);
  });
  after(() => platform?.stop());

  const secondKey = async (tenant: TestTenant): Promise<TestTenant> => ({
    ...tenant,
    apiKey: (await createApiKey(platform.database.db, tenant.tenantId)).api_key,
  });

  it('answers with the headers until the budget is spent, then 429; a refused write stores nothing; another key of the tenant has its own budget', async () => {
    const tenant = await platform.tenant();
    const client = dataClient(platform.dataUrl, tenant);
    for (let i = 1; i <= 3; i++) {
      const res = await client.post(KEYS, {});
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([rateLimitOf(res).policy, rateLimitOf(res).remaining], ['4;w=60', 4 - i]);
    }
    // A contract violation is counted and answered with the headers too.
    const invalid = await client.post(BATCH, { data: 'nope' });
    assertProblem(invalid, 422, 'validation_failed');
    assert.equal(rateLimitOf(invalid).remaining, 0);
    assertRateLimited(await client.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { esg_score: 6.1 } }] }));

    const other = dataClient(platform.dataUrl, await secondKey(tenant));
    const keys = await other.post(KEYS, {});
    assert.equal(keys.status, 200, keys.text);
    assert.equal(rateLimitOf(keys).remaining, 3);
    assert.deepEqual(keys.body.data, {}, 'the refused batch stored nothing');
  });

  it("applies a tenant's own limit, and never another tenant's", async () => {
    const limited = await platform.tenant();
    const neighbour = await platform.tenant();
    await setTenantRateLimits(platform.database.db, limited.tenantId, { requests_per_minute: 2 });
    const client = dataClient(platform.dataUrl, limited);
    for (let i = 0; i < 2; i++) assert.equal(rateLimitOf(await client.post(KEYS, {})).policy, '2;w=60');
    assertRateLimited(await client.post(KEYS, {}));
    const res = await dataClient(platform.dataUrl, neighbour).post(KEYS, {});
    assert.equal(res.status, 200, res.text);
    assert.deepEqual([rateLimitOf(res).policy, rateLimitOf(res).remaining], ['4;w=60', 3]);
  });

  it('shares one budget between two replicas on one database', async function () {
    this.timeout(60_000);
    const replica: RunningService = await startDataService(
      loadDataConfig({
        // In the tests' event loop, like the test platform's services (test-support/src/platform.ts).
        OVERLOAD_SHEDDING: 'false',
        ...env,
        HOST: '127.0.0.1',
        PORT: '0',
        DATABASE_URL: platform.database.url,
        NATS_URL: platform.natsUrl,
        OPTIMIZER: 'false',
        DUCKDB_PATH: join(testWorkDir(), `data-${newUlid()}.duckdb`),
        REFERENCE_DIR: join(testWorkDir(), 'reference'),
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      }),
      createLogger('test', process.env.LOG_LEVEL ?? 'error'),
    );
    try {
      const tenant = await platform.tenant();
      const remaining: number[] = [];
      for (const url of [platform.dataUrl, replica.url, platform.dataUrl, replica.url]) {
        const res = await dataClient(url, tenant).post(KEYS, {});
        assert.equal(res.status, 200, res.text);
        remaining.push(rateLimitOf(res).remaining);
      }
      assert.deepEqual(remaining, [3, 2, 1, 0]);
      assertRateLimited(await dataClient(replica.url, tenant).post(KEYS, {}));
      assertRateLimited(await dataClient(platform.dataUrl, tenant).post(KEYS, {}));
    } finally {
      await replica.stop();
    }
  });

  it('never limits /livez and /readyz', async () => {
    for (let i = 0; i < 10; i++) {
      for (const path of ['/livez', '/readyz']) {
        const res = await call(platform.dataUrl + path);
        assert.equal(res.status, 200, `${path}: ${res.text}`);
        assert.equal(res.headers.get('ratelimit'), null);
      }
    }
  });
});
