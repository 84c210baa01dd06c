import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createLogger, newUlid } from '@platform/shared';
import { testNatsUrl } from '@platform/test-support/database';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { loadDataConfig } from '../src/config.ts';
import { startDataService, type RunningService } from '../src/service.ts';
import { dataClient } from './support/data-client.ts';
import { KNOWN, buildFixture } from './support/reference-fixture.ts';
import { removeTenantUniverse, seedTenantUniverses } from './support/tenant-data.ts';

const BATCH = '/data/custom/reference/batch/';
const REMOVE = '/data/custom/reference/remove/';
const CLEAR = '/data/custom/reference/clear/';
const QUERY = '/data/reference/query/';
const APPLE = 'US0378331005';
const WORLD = 'IE00B4L5Y983';
const picks = { name: 'House picks', description: 'Picked.', type: 'inspiration', query: { xray: '$VALUE_STARS >= 4' } };

/**
 * Tenant data is durable and the same on every replica: two data services on one database, each
 * with its own DuckDB file, answer every write made through the other from the next request on.
 */
describe('data service replicas', () => {
  let platform: TestPlatform;
  let fixture: Awaited<ReturnType<typeof buildFixture>>;
  const replicas: RunningService[] = [];
  let urlA: string;
  let urlB: string;
  let t1: TestTenant;
  let t2: TestTenant;

  /** A data service beside the platform's: same database, NATS and reference files, its own DuckDB file. */
  const startReplica = async (duckdbPath = join(fixture.referenceDir, '..', `replica-${newUlid()}.duckdb`)) => {
    const config = loadDataConfig({
      // In the tests' event loop, like the test platform's services (test-support/src/platform.ts).
      OVERLOAD_SHEDDING: 'false',
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      OPTIMIZER: 'false',
      DATABASE_URL: platform.database.url,
      NATS_URL: testNatsUrl(),
      DUCKDB_PATH: duckdbPath,
      REFERENCE_DIR: fixture.referenceDir,
      REFERENCE_RELOAD_MS: '0',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    });
    const replica = await startDataService(config, createLogger('test', config.LOG_LEVEL));
    replicas.push(replica);
    return { url: replica.url, path: duckdbPath, stop: () => replicas.splice(replicas.indexOf(replica), 1)[0]!.stop() };
  };
  const on = (url: string, tenant: TestTenant) => dataClient(url, tenant);
  /** The tenant's custom values of `keys` for the instruments, as a reference query answers them. */
  const extras = async (url: string, tenant: TestTenant, keys: string[], isins = [APPLE, WORLD]) => {
    const res = await on(url, tenant).post(QUERY, { instrument_ids: isins, fields: [], fields_extra: keys });
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };
  const customKeys = async (url: string, tenant: TestTenant) => {
    const res = await on(url, tenant).post('/data/custom/reference/query/', {});
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };
  const definitionIds = async (url: string, tenant: TestTenant) => {
    const res = await on(url, tenant).get('/inspiration/definition/');
    assert.equal(res.status, 200, res.text);
    return (res.body as { id: string; custom: boolean }[]).filter((d) => d.custom).map((d) => d.id);
  };
  const putDefinition = (url: string, tenant: TestTenant, id: string, body: unknown) =>
    call(`${url}/inspiration/definition/${id}`, { method: 'PUT', body, headers: { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey } });
  const deleteDefinition = (url: string, tenant: TestTenant, id: string) =>
    call(`${url}/inspiration/definition/${id}`, { method: 'DELETE', headers: { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey } });
  const universe = async (url: string, tenant: TestTenant, name: string) => {
    const res = await on(url, tenant).get(`/data/reference/universe/?universe_name=${name}&fields=NAME`);
    return res.status === 200 ? Object.keys(res.body.data) : res.status;
  };
  const xrayMembers = async (url: string, tenant: TestTenant, name: string) => {
    const res = await on(url, tenant).get(`/xray/universe/?universe_name=${name}&fields=VALUE_STARS`);
    assert.equal(res.status, 200, res.text);
    return Object.keys(res.body[0].data);
  };

  before(async () => {
    fixture = await buildFixture(KNOWN);
    platform = await startTestPlatform(fixture.env);
    urlA = platform.dataUrl;
    urlB = (await startReplica()).url;
    t1 = await platform.tenant();
    t2 = await platform.tenant();
  });
  after(async () => {
    for (const replica of replicas.splice(0)) await replica.stop();
    await platform?.stop();
  });
  beforeEach(async () => {
    for (const t of [t1, t2]) assert.equal((await on(urlA, t).post(CLEAR, {})).status, 200);
  });

  it('reads a custom value written through the other replica at once, and a removal too', async () => {
    // B has read the tenant (and cached "no values") before A writes.
    assert.deepEqual(await customKeys(urlB, t1), {});
    const written = await on(urlA, t1).post(BATCH, { data: [{ instrument_id: APPLE, reference_data: { esg_score: 6.1, note: 'a' } }] });
    assert.deepEqual(written.body, { data: { upserted: 2 }, meta: null });
    assert.deepEqual(await extras(urlB, t1, ['esg_score', 'note']), { [APPLE]: { esg_score: 6.1, note: 'a' }, [WORLD]: { esg_score: null, note: null } });

    const removed = await on(urlB, t1).post(REMOVE, { instrument_ids: [APPLE], keys: ['note'] });
    assert.deepEqual(removed.body, { data: { removed: 1 }, meta: null });
    assert.deepEqual(await extras(urlA, t1, ['esg_score']), { [APPLE]: { esg_score: 6.1 }, [WORLD]: { esg_score: null } });
    assertProblem(await on(urlA, t1).post(QUERY, { instrument_ids: [APPLE], fields: [], fields_extra: ['note'] }), 422, 'unknown_field');

    // Overwritten on B, read on A; cleared on A, gone on B.
    await on(urlB, t1).post(BATCH, { data: [{ instrument_id: APPLE, reference_data: { esg_score: null, price: 1.5 } }] });
    const a = await on(urlA, t1).post(QUERY, { instrument_ids: [APPLE], fields: ['PRICE'], fields_extra: ['esg_score'] });
    assert.deepEqual(a.body.data, { [APPLE]: { price: 1.5, esg_score: null } });
    assert.deepEqual((await on(urlA, t1).post(CLEAR, {})).body.data, { removed: 2 });
    assert.deepEqual(await customKeys(urlB, t1), {});
  });

  it('lists a custom inspiration put through the other replica, and forgets one deleted there', async () => {
    assert.deepEqual(await definitionIds(urlB, t1), []);
    assert.equal((await putDefinition(urlA, t1, 'house', picks)).status, 201);
    assert.deepEqual(await definitionIds(urlB, t1), ['house']);
    const replaced = await putDefinition(urlB, t1, 'house', { ...picks, name: 'Renamed on B' });
    assert.equal(replaced.status, 200, 'B knows that A created it');
    const onA = (await on(urlA, t1).get('/inspiration/definition/')).body.find((d: { id: string }) => d.id === 'house');
    assert.equal(onA.name, 'Renamed on B');
    assert.equal((await deleteDefinition(urlB, t1, 'house')).status, 204);
    assert.deepEqual(await definitionIds(urlA, t1), []);
    assertProblem(await on(urlA, t1).get('/inspiration/?id=house'), 404, 'not_found');
    assertProblem(await deleteDefinition(urlA, t1, 'house'), 404, 'not_found');
  });

  it('serves a tenant universe written to Postgres on both replicas, X-Ray included, and follows its changes', async () => {
    for (const url of [urlA, urlB]) assert.equal(await universe(url, t1, 'MINE'), 404);
    await seedTenantUniverses(platform.database, [{ tenant: t1.tenantId, name: 'MINE', isins: [APPLE, WORLD] }]);
    for (const url of [urlA, urlB]) {
      assert.deepEqual(await universe(url, t1, 'MINE'), [WORLD, APPLE]);
      assert.deepEqual(await xrayMembers(url, t1, 'MINE'), [WORLD, APPLE]);
    }
    // The X-Ray cache of each replica must not answer the old members.
    await seedTenantUniverses(platform.database, [{ tenant: t1.tenantId, name: 'MINE', isins: [APPLE] }]);
    for (const url of [urlA, urlB]) assert.deepEqual(await xrayMembers(url, t1, 'MINE'), [APPLE]);
    await removeTenantUniverse(platform.database, t1.tenantId, 'MINE');
    for (const url of [urlA, urlB]) assert.equal(await universe(url, t1, 'MINE'), 404);
  });

  it('keeps tenants apart on both replicas', async () => {
    await on(urlA, t1).post(BATCH, { data: [{ instrument_id: APPLE, reference_data: { secret: 't1-only' } }] });
    await on(urlB, t2).post(BATCH, { data: [{ instrument_id: APPLE, reference_data: { esg_score: 2 } }] });
    await seedTenantUniverses(platform.database, [{ tenant: t1.tenantId, name: 'T1_ONLY', isins: [APPLE] }]);
    for (const url of [urlA, urlB]) {
      assert.deepEqual(await customKeys(url, t2), { [APPLE]: { esg_score: 2 } });
      assert.deepEqual(await customKeys(url, t1), { [APPLE]: { secret: 't1-only' } });
      assertProblem(await on(url, t2).post(QUERY, { instrument_ids: [APPLE], fields: [], fields_extra: ['secret'] }), 422, 'unknown_field');
      assert.equal(await universe(url, t2, 'T1_ONLY'), 404);
      assert.deepEqual((await on(url, t2).post(REMOVE, { instrument_ids: [APPLE], keys: ['secret'] })).body.data, { removed: 0 });
    }
    assert.deepEqual((await on(urlB, t2).post(CLEAR, {})).body.data, { removed: 1 });
    for (const url of [urlA, urlB]) assert.deepEqual(await customKeys(url, t1), { [APPLE]: { secret: 't1-only' } });
    await removeTenantUniverse(platform.database, t1.tenantId, 'T1_ONLY');
  });

  it('ends with the same values on both replicas after concurrent writes through both', async () => {
    const writes = Array.from({ length: 24 }, (_, i) =>
      on(i % 2 === 0 ? urlA : urlB, t1).post(BATCH, { data: [{ instrument_id: APPLE, reference_data: { [`k${i % 6}`]: i, last: i } }] }),
    );
    assert.deepEqual(
      (await Promise.all(writes)).map((r) => r.status),
      writes.map(() => 200),
    );
    const a = await customKeys(urlA, t1);
    assert.deepEqual(await customKeys(urlB, t1), a);
    assert.deepEqual(Object.keys(a[APPLE]).sort(), ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'last']);
  });

  it('refuses text that Postgres cannot hold (U+0000) with 422 and writes nothing', async () => {
    const nul = await on(urlA, t1).post(BATCH, { data: [{ instrument_id: APPLE, reference_data: { ok: 1, note: 'a\u0000b' } }] });
    assertProblem(nul, 422, 'validation_failed');
    assertProblem(await putDefinition(urlA, t1, 'nul', { ...picks, name: 'a\u0000' }), 422, 'validation_failed');
    for (const url of [urlA, urlB]) {
      assert.deepEqual(await customKeys(url, t1), {});
      assert.deepEqual(await definitionIds(url, t1), []);
    }
  });

  it('serves the tenant data from Postgres after a restart on an empty DuckDB file, and on a stale one', async () => {
    await on(urlA, t1).post(BATCH, { data: [{ instrument_id: APPLE, reference_data: { esg_score: 7 } }] });
    assert.equal((await putDefinition(urlA, t1, 'kept', picks)).status, 201);
    await seedTenantUniverses(platform.database, [{ tenant: t1.tenantId, name: 'KEPT', isins: [WORLD] }]);

    const fresh = await startReplica();
    try {
      assert.deepEqual(await extras(fresh.url, t1, ['esg_score'], [APPLE]), { [APPLE]: { esg_score: 7 } });
      assert.deepEqual(await definitionIds(fresh.url, t1), ['kept']);
      assert.deepEqual(await universe(fresh.url, t1, 'KEPT'), [WORLD]);
      assert.deepEqual(await customKeys(fresh.url, t2), {});
    } finally {
      await fresh.stop();
    }

    // The stopped replica's file still holds esg_score 7; Postgres moves on while it is down.
    await on(urlA, t1).post(BATCH, { data: [{ instrument_id: APPLE, reference_data: { esg_score: 8 } }] });
    await removeTenantUniverse(platform.database, t1.tenantId, 'KEPT');
    const restarted = await startReplica(fresh.path);
    try {
      assert.deepEqual(await extras(restarted.url, t1, ['esg_score'], [APPLE]), { [APPLE]: { esg_score: 8 } });
      assert.equal(await universe(restarted.url, t1, 'KEPT'), 404);
    } finally {
      await restarted.stop();
    }
  });
});
