import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createLogger, newUlid } from '@platform/shared';
import { testNatsUrl, testWorkDir } from '@platform/test-support/database';
import { assertProblem, call } from '@platform/test-support/http';
import { startOwnPostgres, type OwnPostgres } from '@platform/test-support/own-postgres';
import { createApiKey, createTenant, revokeApiKey } from '@platform/dev-stack/tenants';
import pg from 'pg';
import { loadDataConfig } from '../src/config.ts';
import { Outage } from '../src/domain/outage.ts';
import { postgresReadiness } from '../src/tenant-data/readiness.ts';
import { startDataService, type RunningService } from '../src/service.ts';
import { seedTenantUniverses } from './support/tenant-data.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

// The data service while Postgres does not answer (docs/adr/0025-data-service-degraded.md): a
// Postgres of the test's own, reached by the service only through a TCP proxy the test cuts and
// restores, so the database stays reachable for the test's own checks meanwhile.

const TENANT = 'degraded';
const DEGRADED_MAX_MS = 8_000;
const CONNECT_TIMEOUT_MS = 500;
const BATCH = '/data/custom/reference/batch/';
const CSV = '/data/custom/reference/csv/';
const REMOVE = '/data/custom/reference/remove/';
const CLEAR = '/data/custom/reference/clear/';
const picks = { name: 'House picks', description: 'Picked.', type: 'inspiration', query: { xray: '$VALUE_STARS >= 4' } };

/** The future performance request of the read checks: seeded, so the same answer every time. */
const simulation = {
  asset_classes: { EQUITY: [0.8, 1], FIXED_INCOME: [0, 0.2] },
  start_date: '2022-01-31',
  end_date: '2022-12-31',
  currency: 'EUR',
  start_amount: 1000,
  sample_frequency: 'M',
  quantiles: [0.05, 0.5, 0.95],
  use_expected_returns: true,
  asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.07, stdev: 0.16 }, FIXED_INCOME: { mean: 0.03, stdev: 0.05 } },
  asset_class_lt_mean_and_stdev: { EQUITY: { mean: 0.06, stdev: 0.15 }, FIXED_INCOME: { mean: 0.025, stdev: 0.04 } },
  short_to_long_term_transition_cut_off: 5,
  scenarios: 500,
  seed: 7,
};

/** An answer without what differs between two calls of the same thing (the request id of a problem). */
const same = (body: unknown) => (body && typeof body === 'object' && 'request_id' in body ? { ...body, request_id: undefined } : body);

function assertUnavailable(res: Awaited<ReturnType<typeof call>>): void {
  assertProblem(res, 503, 'unavailable');
  assert.equal(res.headers.get('retry-after'), '5');
}

describe('data service degraded while Postgres does not answer', function () {
  this.timeout(180_000);
  let postgres: OwnPostgres;
  let proxy: TcpProxy;
  let service: RunningService | undefined;
  let url: string;
  let isins: string[];
  let keys: { good: string; revoked: string; unseen: string };
  /** What the service logged at warn and info level, in order. */
  const warnings: string[] = [];
  const infos: string[] = [];
  /** The answers of every read before Postgres went away. */
  let baseline: Awaited<ReturnType<typeof readAll>>;

  const as = (key: string) => ({ 'x-tenant-id': TENANT, 'x-api-key': key });
  const get = (path: string, key = keys.good) => call(`${url}${path}`, { headers: as(key) });
  const post = (path: string, body: unknown, key = keys.good) => call(`${url}${path}`, { body, headers: as(key) });

  /** Every read operation of the interface, by name: the call and its answer. */
  const reads = (): Record<string, () => ReturnType<typeof call>> => ({
    reference: () => post('/data/reference/query/', { instrument_ids: isins, fields: ['NAME', 'PRICE'], fields_extra: ['esg_score'] }),
    universe: () => get('/data/reference/universe/?universe_name=ROBO&fields=NAME'),
    house: () => get('/data/reference/universe/?universe_name=HOUSE&fields=NAME'),
    xray: () => get('/xray/universe/?universe_name=ROBO&fields=VALUE_STARS&fields=SIZE_STARS'),
    search: () => post('/smart-search/', { query: { reference: "$ASSET_CLASS == 'EQUITY'", xray: '$VALUE_STARS >= 3' } }),
    inspirations: () => get('/inspiration/?id=house_picks'),
    definitions: () => get('/inspiration/definition/'),
    custom: () => post('/data/custom/reference/query/', {}),
    simulation: () => post('/performance/future/', simulation),
  });
  const readAll = async () => {
    const answers: Record<string, Awaited<ReturnType<typeof call>>> = {};
    for (const [name, read] of Object.entries(reads())) answers[name] = await read();
    return answers;
  };
  /** What Postgres holds of the tenant's data, read directly (not through the proxy). */
  const stored = async () => ({
    version: (await postgres.db('data_tenant_versions').where({ tenant_id: TENANT }).first())?.version,
    custom: await postgres.db('data_custom_reference').where({ tenant_id: TENANT }).orderBy(['isin', 'key']).select('isin', 'key', 'value'),
    inspirations: await postgres.db('data_inspirations').where({ tenant_id: TENANT }).orderBy('id').select('id', 'name'),
  });
  const readyz = () => call(`${url}/readyz`);

  before(async () => {
    postgres = await startOwnPostgres();
    proxy = await startTcpProxy({ host: '127.0.0.1', port: postgres.port });
    await createTenant(postgres.db, { id: TENANT });
    const good = await createApiKey(postgres.db, TENANT);
    const revoked = await createApiKey(postgres.db, TENANT);
    const unseen = await createApiKey(postgres.db, TENANT);
    keys = { good: good.api_key, revoked: revoked.api_key, unseen: unseen.api_key };
    const logger = createLogger('test', process.env.LOG_LEVEL ?? 'error');
    for (const [level, lines] of [
      ['warn', warnings],
      ['info', infos],
    ] as const) {
      const log = logger[level].bind(logger);
      logger[level] = ((message: string, ...meta: unknown[]) => {
        lines.push(message);
        return log(message, ...(meta as []));
      }) as typeof log;
    }
    const databaseUrl = new URL(postgres.url);
    databaseUrl.port = String(proxy.port);
    service = await startDataService(
      loadDataConfig({
        HOST: '127.0.0.1',
        PORT: '0',
        DATABASE_URL: databaseUrl.toString(),
        NATS_URL: testNatsUrl(),
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
        DUCKDB_PATH: join(testWorkDir(), `data-${newUlid()}.duckdb`),
        REFERENCE_DIR: join(testWorkDir(), 'reference'),
        OPTIMIZER: 'false',
        METRICS_PORT: '0',
        // Every request looks its key and revocations up in Postgres: the degraded answers below
        // come from lookups whose cache time has run out.
        API_KEY_CACHE_MS: '0',
        TOKEN_REVOCATION_CHECK_MS: '0',
        DEGRADED_MAX_MS: String(DEGRADED_MAX_MS),
        DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      }),
      logger,
    );
    url = service.url;

    const robo = await get('/data/reference/universe/?universe_name=ROBO&fields=NAME');
    assert.equal(robo.status, 200, robo.text);
    isins = Object.keys(robo.body.data).slice(0, 3);
    assert.equal(isins.length, 3);
    const values = await post(BATCH, { data: isins.map((isin, i) => ({ instrument_id: isin, reference_data: { esg_score: i + 1 } })) });
    assert.equal(values.status, 200, values.text);
    const definition = await call(`${url}/inspiration/definition/house_picks`, { method: 'PUT', body: picks, headers: as(keys.good) });
    assert.equal(definition.status, 201, definition.text);
    // The revoked key was known valid, then is revoked while Postgres answers.
    assert.equal((await get('/data/reference/universe/?universe_name=ROBO&fields=NAME', keys.revoked)).status, 200);
    assert.ok(await revokeApiKey(postgres.db, revoked.api_key_id));
    assertProblem(await get('/data/reference/universe/?universe_name=ROBO&fields=NAME', keys.revoked), 401, 'unauthenticated');

    baseline = await readAll();
    for (const [name, res] of Object.entries(baseline)) if (name !== 'house') assert.equal(res.status, 200, `${name}: ${res.text}`);
    assert.deepEqual(Object.keys(baseline.reference!.body.data).sort(), [...isins].sort());
    assert.equal(baseline.inspirations!.body.length, 1);
    const ready = await readyz();
    assert.equal(ready.status, 200, ready.text);
    assert.deepEqual(ready.body, { status: 'ok', checks: { duckdb: 'ok', postgres: 'ok', nats: 'ok' } });
  });
  after(async () => {
    await service?.stop();
    await proxy?.close();
    await postgres?.stop();
  });

  describe('Postgres unreachable for less than DEGRADED_MAX_MS', () => {
    let data: Awaited<ReturnType<typeof stored>>;
    before(async () => {
      data = await stored();
      await proxy.cut();
    });

    it('answers every read with the values of before, and /readyz with 200 degraded', async () => {
      const started = Date.now();
      const answers = await readAll();
      for (const [name, res] of Object.entries(answers)) {
        assert.equal(res.status, baseline[name]!.status, `${name}: ${res.text}`);
        assert.deepEqual(same(res.body), same(baseline[name]!.body), name);
      }
      const ready = await readyz();
      assert.equal(ready.status, 200, ready.text);
      assert.deepEqual(ready.body, { status: 'degraded', checks: { duckdb: 'ok', postgres: 'degraded', nats: 'ok' } });
      assert.ok(Date.now() - started < DEGRADED_MAX_MS, 'the reads took longer than the degraded window');
    });

    it('refuses an API key it never verified with 503 and a revoked one with 401, as before', async () => {
      assertUnavailable(await get('/data/reference/universe/?universe_name=ROBO&fields=NAME', keys.unseen));
      assertUnavailable(await post('/performance/future/', simulation, keys.unseen));
      assertProblem(await get('/data/reference/universe/?universe_name=ROBO&fields=NAME', keys.revoked), 401, 'unauthenticated');
      assertProblem(await post('/performance/future/', simulation, keys.revoked), 401, 'unauthenticated');
    });

    it('refuses every write with 503 unavailable and Retry-After', async () => {
      assertUnavailable(await post(BATCH, { data: [{ instrument_id: isins[0], reference_data: { esg_score: 99 } }] }));
      assertUnavailable(
        await call(`${url}${BATCH}`, {
          body: { data: [{ instrument_id: isins[0], reference_data: { x: 1 } }] },
          headers: { ...as(keys.good), 'idempotency-key': 'k1' },
        }),
      );
      assertUnavailable(
        await call(`${url}${CSV}`, { rawBody: `instrument_id,esg_score\n${isins[1]},98\n`, headers: { ...as(keys.good), 'content-type': 'text/csv' } }),
      );
      assertUnavailable(await post(REMOVE, { instrument_ids: [isins[2]], keys: ['esg_score'] }));
      assertUnavailable(await post(CLEAR, {}));
      assertUnavailable(
        await call(`${url}/inspiration/definition/house_picks`, { method: 'PUT', body: { ...picks, name: 'Changed' }, headers: as(keys.good) }),
      );
      assertUnavailable(await call(`${url}/inspiration/definition/other_picks`, { method: 'PUT', body: picks, headers: as(keys.good) }));
      assertUnavailable(await call(`${url}/inspiration/definition/house_picks`, { method: 'DELETE', headers: as(keys.good) }));
      // Still served from the cache afterwards: the refused writes touched nothing here either.
      const reference = await reads().reference!();
      assert.deepEqual(reference.body, baseline.reference!.body);
    });

    it('logs the outage once, however many requests met it', () => {
      assert.equal(warnings.filter((w) => /^Postgres does not answer/.test(w)).length, 1, warnings.join('\n'));
    });

    it('leaves the degraded state by itself once Postgres answers: nothing was written, changed data is reloaded, writes succeed', async () => {
      // Changed meanwhile by another way in (the platform team's CLI writes universes straight to Postgres).
      await seedTenantUniverses(postgres, [{ tenant: TENANT, name: 'HOUSE', isins: [isins[0]!] }]);
      assert.deepEqual(same((await reads().house!()).body), same(baseline.house!.body), 'served from the cache while degraded');
      await proxy.restore();
      const ready = await readyz();
      assert.equal(ready.status, 200, ready.text);
      assert.deepEqual(ready.body, { status: 'ok', checks: { duckdb: 'ok', postgres: 'ok', nats: 'ok' } });
      // Nothing of the refused writes: the custom values and definitions of before, one version more (the universe).
      const now = await stored();
      assert.deepEqual({ ...now, version: Number(now.version) }, { ...data, version: Number(data.version) + 1 });
      const house = await reads().house!();
      assert.equal(house.status, 200, house.text);
      assert.deepEqual(Object.keys(house.body.data), [isins[0]]);
      const written = await post(BATCH, { data: [{ instrument_id: isins[0], reference_data: { esg_score: 42 } }] });
      assert.equal(written.status, 200, written.text);
      const reference = await reads().reference!();
      assert.equal(reference.body.data[isins[0]!].esg_score, 42);
      assert.equal(infos.filter((line) => /^Postgres answers again/.test(line)).length, 1, infos.join('\n'));
    });
  });

  describe('Postgres accepting connections but never answering', () => {
    before(() => proxy.hang());
    after(() => proxy.restore());

    it('serves reads degraded and refuses writes once DATABASE_CONNECT_TIMEOUT_MS has passed, instead of waiting for ever', async () => {
      const started = Date.now();
      const reference = await reads().reference!();
      assert.equal(reference.status, 200, reference.text);
      assert.equal(reference.body.data[isins[0]!].esg_score, 42);
      assertUnavailable(await post(BATCH, { data: [{ instrument_id: isins[0], reference_data: { esg_score: 7 } }] }));
      // One connection time-out, then the cache (the key, its revocations and the tenant's data
      // would otherwise each wait that long); the write waits for its own connection.
      assert.ok(Date.now() - started < 8 * CONNECT_TIMEOUT_MS, `took ${Date.now() - started} ms`);
      assert.equal((await readyz()).body.status, 'degraded');
    });

    it("answers the readiness check within its own bound, below the probe's time-out, however long a connection may wait", async () => {
      const pool = new pg.Pool({ host: '127.0.0.1', port: proxy.port, user: 'postgres', connectionTimeoutMillis: 3_000 });
      pool.on('error', () => undefined);
      try {
        const outage = new Outage(60_000, Date.now);
        await assert.rejects(postgresReadiness(pool, outage, 300), /did not answer within 300 ms/, 'never reached: not ready');
        outage.reachable();
        const started = Date.now();
        assert.equal(await postgresReadiness(pool, outage, 300), 'degraded');
        assert.ok(Date.now() - started < 1_000, `took ${Date.now() - started} ms`);
      } finally {
        await pool.end();
      }
    });

    it('answers again once Postgres does, and the refused write changed nothing', async () => {
      await proxy.restore();
      assert.equal((await readyz()).body.status, 'ok');
      assert.equal((await reads().reference!()).body.data[isins[0]!].esg_score, 42);
    });
  });

  describe('Postgres unreachable for longer than DEGRADED_MAX_MS', () => {
    before(() => proxy.cut());
    after(() => proxy.restore());

    it('serves reads at first, then refuses them with 503 and is no longer ready', async () => {
      assert.equal((await reads().reference!()).status, 200);
      // The outage began at the latest with this read's failure.
      const degradedFrom = Date.now();
      const ready = await readyz();
      assert.equal(ready.body.status, 'degraded', ready.text);
      await new Promise((r) => setTimeout(r, DEGRADED_MAX_MS - (Date.now() - degradedFrom) + 200));
      for (const name of ['reference', 'universe', 'xray', 'search', 'inspirations', 'simulation']) {
        assertUnavailable(await reads()[name]!());
      }
      const notReady = await readyz();
      assertProblem(notReady, 503, 'unavailable');
      assert.equal(notReady.body.checks.postgres, 'failing');
      assert.equal(warnings.filter((w) => /^Postgres does not answer/.test(w)).length, 3, 'once per outage');
    });

    it('serves again once Postgres answers', async () => {
      await proxy.restore();
      const res = await reads().reference!();
      assert.equal(res.status, 200, res.text);
      assert.equal((await readyz()).body.status, 'ok');
    });
  });
});
