import assert from 'node:assert/strict';
import { createApiKey } from '@platform/dev-stack/tenants';
import { revokeApiKey } from '@platform/dev-stack/tenants';
import { waitFor } from '@platform/dev-stack/ports';
import { call, assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';

// The revocation bound under test is the configured one; the margin covers a slow machine.
const BOUND_MS = 1_000;
const DEADLINE_MS = BOUND_MS + 5_000;

describe('data service access', () => {
  let platform: TestPlatform;
  let a: TestTenant;
  let b: TestTenant;
  const query = { instrument_ids: ['US0378331005'], fields: ['NAME'], fields_extra: [] };
  const ask = (headers: Record<string, string>) => call(`${platform.dataUrl}/data/reference/query/`, { body: query, headers });

  before(async () => {
    // API keys stay cached for the default 30 s: revocation must get past that cache.
    platform = await startTestPlatform({ TOKEN_REVOCATION_CHECK_MS: String(BOUND_MS) });
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

  it('refuses a key revoked while cached within the bound, and the refused write stores nothing', async () => {
    const c = await platform.tenant();
    const spare = await createApiKey(platform.database.db, c.tenantId);
    const asC = { 'x-tenant-id': c.tenantId, 'x-api-key': c.apiKey };
    const batch = (headers: Record<string, string>, value: number) =>
      call(`${platform.dataUrl}/data/custom/reference/batch/`, {
        body: { data: [{ instrument_id: 'US0378331005', reference_data: { esg: value } }] },
        headers,
      });
    assert.equal((await ask(asC)).status, 200);
    assert.equal((await batch(asC, 1)).status, 200);
    const id = (await platform.database.db('api_keys').where({ tenant_id: c.tenantId }).whereNot({ id: spare.api_key_id }).first('id')).id;
    assert.ok(await revokeApiKey(platform.database.db, id));
    await waitFor('the revoked key refused', async () => assertProblem(await ask(asC), 401, 'unauthenticated'), DEADLINE_MS);
    assertProblem(await batch(asC, 2), 401, 'unauthenticated');
    const asSpare = { 'x-tenant-id': c.tenantId, 'x-api-key': spare.api_key };
    assert.equal((await ask(asSpare)).status, 200, 'another key of the tenant still works');
    const stored = await call(`${platform.dataUrl}/data/custom/reference/query/`, { body: {}, headers: asSpare });
    assert.equal(stored.status, 200, stored.text);
    assert.deepEqual(stored.body.data, { US0378331005: { esg: 1 } });
  });

  it('validates bodies against the contract after authentication', async () => {
    assertProblem(await call(`${platform.dataUrl}/data/reference/query/`, { body: { fields: 'NAME' } }), 401, 'unauthenticated');
    const res = await call(`${platform.dataUrl}/data/reference/query/`, {
      body: { fields: 'NAME' },
      headers: { 'x-tenant-id': a.tenantId, 'x-api-key': a.apiKey },
    });
    assertProblem(res, 422, 'validation_failed');
    const locs = res.body.errors.map((e: { loc: string[] }) => e.loc.join('.'));
    assert.ok(locs.includes('body.instrument_ids'), locs.join());
    assert.ok(locs.includes('body.fields'), locs.join());
  });
});
