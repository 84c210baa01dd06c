import assert from 'node:assert/strict';
import { revokeApiKey } from '../../management-service/src/store/credentials.ts';
import { call, assertProblem } from '../../scripts/test-support/http.ts';
import { startTestPlatform, type TestPlatform, type TestTenant } from '../../scripts/test-support/platform.ts';

describe('data service access', () => {
  let platform: TestPlatform;
  let a: TestTenant;
  let b: TestTenant;
  const query = { instrument_ids: ['US0378331005'], fields: ['NAME'], fields_extra: [] };
  const ask = (headers: Record<string, string>) => call(`${platform.dataUrl}/data/reference/query/`, { body: query, headers });

  before(async () => {
    platform = await startTestPlatform({ API_KEY_CACHE_MS: '0' });
    a = await platform.tenant();
    b = await platform.tenant();
  });
  after(() => platform.stop());

  it('answers /readyz with the state of DuckDB, Postgres and NATS', async () => {
    const res = await call(`${platform.dataUrl}/readyz`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.checks, { duckdb: 'ok', postgres: 'ok', nats: 'ok' });
  });

  it('refuses a request without credentials or with an unknown key', async () => {
    assertProblem(await ask({}), 401, 'unauthenticated');
    assertProblem(await ask({ 'x-tenant-id': a.tenantId }), 401, 'unauthenticated');
    assertProblem(await ask({ 'x-tenant-id': a.tenantId, 'x-api-key': 'dk_unknown' }), 401, 'unauthenticated');
  });

  it("refuses tenant A's key with X-TENANT-ID of tenant B", async () => {
    assertProblem(await ask({ 'x-tenant-id': b.tenantId, 'x-api-key': a.apiKey }), 403, 'forbidden');
  });

  it('lets a valid key of the named tenant through to the operation', async () => {
    const res = await ask({ 'x-tenant-id': a.tenantId, 'x-api-key': a.apiKey });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.meta, null);
  });

  it('stops a revoked key', async () => {
    const c = await platform.tenant();
    const id = (await platform.database.db('api_keys').where({ tenant_id: c.tenantId }).first('id')).id;
    assert.ok(await revokeApiKey(platform.database.db, id));
    assertProblem(await ask({ 'x-tenant-id': c.tenantId, 'x-api-key': c.apiKey }), 401, 'unauthenticated');
  });

  it('validates bodies against the contract after authentication', async () => {
    assertProblem(await call(`${platform.dataUrl}/data/reference/query/`, { body: { fields: 'NAME' } }), 401, 'unauthenticated');
    const res = await call(`${platform.dataUrl}/data/reference/query/`, { body: { fields: 'NAME' }, headers: { 'x-tenant-id': a.tenantId, 'x-api-key': a.apiKey } });
    assertProblem(res, 422, 'validation_failed');
    const locs = res.body.errors.map((e: { loc: string[] }) => e.loc.join('.'));
    assert.ok(locs.includes('body.instrument_ids'), locs.join());
    assert.ok(locs.includes('body.fields'), locs.join());
  });
});
