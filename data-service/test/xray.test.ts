import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { createLogger } from '@platform/shared';
import { createTenant } from '@platform/dev-stack/tenants';
import { createTestDatabase, testWorkDir } from '@platform/test-support/database';
import { assertProblem, call } from '@platform/test-support/http';
import type { TestTenant } from '@platform/test-support/platform';
import { openDuckStore, type DuckStore } from '../src/store/duckdb.ts';
import { TenantCache } from '../src/tenant-data/cache.ts';
import { XrayService } from '../src/xray/xray.ts';
import { seedTenantUniverses } from './support/tenant-data.ts';
import { buildFixtureReference, INSTRUMENTS, isin, startFixturePlatform, tenantId, type FixturePlatform } from './xray-fixture.ts';

/** Expected stars by instrument number (1…12); computed by hand from the fixture, see each test. */
const byNumber = (field: string, stars: Record<number, number | null>) =>
  Object.fromEntries(Object.entries(stars).map(([n, s]) => [isin(Number(n)), { [field]: s }]));

describe('X-Ray stars (GET /xray/universe/)', () => {
  let fx: FixturePlatform;
  let a: TestTenant;
  let b: TestTenant;
  const idA = tenantId('xa');
  const unknownIsin = 'XZ0000000099';

  const xray = (tenant: TestTenant, params: Record<string, string | string[]>) => {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) for (const x of [v].flat()) search.append(k, x);
    return call(`${fx.platform.dataUrl}/xray/universe/?${search}`, { headers: { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey } });
  };
  const stars = async (tenant: TestTenant, params: Record<string, string | string[]>) => {
    const res = await xray(tenant, params);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.length, 1);
    return res.body[0].data;
  };

  before(async () => {
    // Tenant A adds two instruments to ROBO and has a universe of its own.
    fx = await startFixturePlatform([
      { tenant: idA, name: 'ROBO', isins: [isin(5), isin(6)] },
      { tenant: idA, name: 'MINE', isins: [isin(7), isin(8), unknownIsin] },
    ]);
    a = await fx.platform.tenant(idA);
    b = await fx.platform.tenant();
  });
  after(() => fx.platform.stop());

  it('ranks the whole universe by quintile: 10 distinct values give 1,1,2,2,3,3,4,4,5,5; a missing metric is null', async () => {
    // VALUE 10…100 on I1…I10; I11 has a null metric, I12 no metrics row.
    assert.deepEqual(
      await stars(b, { universe_name: 'GLOBAL', fields: 'VALUE_STARS' }),
      byNumber('VALUE_STARS', { 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 7: 4, 8: 4, 9: 5, 10: 5, 11: null, 12: null }),
    );
  });

  it('gives tied metrics the same stars (mid-rank)', async () => {
    // GROWTH over 11 values: 1, 2, 3, 4, 5, 5, 5, 7, 8, 9, 9 → stars = 1 + ⌊5·(below + equal/2)/11⌋:
    // 1→1, 2→1, 3→2, 4→2, the three 5s → 3, 7→4, 8→4, the two 9s → 5.
    const growth = await stars(b, { universe_name: 'GLOBAL', fields: 'GROWTH_STARS' });
    assert.deepEqual(growth, byNumber('GROWTH_STARS', { 1: 3, 2: 3, 3: 3, 4: 1, 5: 1, 6: 2, 7: 5, 8: 5, 9: 4, 10: 4, 11: 2, 12: null }));
  });

  it('ranks within each SECTOR group', async () => {
    // TECH: I1 10, I2 20, I5 50, I6 60, I9 90 → 1..5; FIN: I3 30, I4 40, I7 70, I8 80, I10 100 → 1..5.
    assert.deepEqual(
      await stars(b, { universe_name: 'GLOBAL', fields: 'VALUE_STARS', group_split_type: 'SECTOR' }),
      byNumber('VALUE_STARS', { 1: 1, 2: 2, 3: 1, 4: 2, 5: 3, 6: 4, 7: 3, 8: 4, 9: 5, 10: 5, 11: null, 12: null }),
    );
  });

  it('ranks within each REGION_SIZE group, groups of two and three', async () => {
    // EU LARGE: I1 10, I3 30, I9 90 → 1, 3, 5.  EU SMALL: I2 20, I4 40 → 2, 4.
    // US LARGE: I5 50, I7 70, I10 100 → 1, 3, 5.  US SMALL: I6 60, I8 80 → 2, 4.
    assert.deepEqual(
      await stars(b, { universe_name: 'GLOBAL', fields: 'VALUE_STARS', group_split_type: 'REGION_SIZE' }),
      byNumber('VALUE_STARS', { 1: 1, 2: 2, 3: 3, 4: 4, 5: 1, 6: 2, 7: 3, 8: 4, 9: 5, 10: 5, 11: null, 12: null }),
    );
  });

  it('answers every grouping of the contract', async () => {
    for (const split of ['REGION', 'SECTOR', 'REGION_SECTOR', 'SIZE', 'REGION_SIZE', 'SECTOR_SIZE', 'REGION_SECTOR_SIZE']) {
      const data = await stars(b, { universe_name: 'GLOBAL', fields: ['VALUE_STARS', 'GROWTH_STARS'], group_split_type: split });
      assert.equal(Object.keys(data).length, 12, split);
      for (const s of Object.values(data) as Record<string, number | null>[]) {
        for (const v of Object.values(s)) assert.ok(v === null || (Number.isInteger(v) && v >= 1 && v <= 5), `${split}: ${v}`);
      }
    }
    // REGION_SECTOR_SIZE: every group holds at most two valued instruments; EU TECH LARGE holds I1 10 and I9 90 → 2 and 4.
    const finest = await stars(b, { universe_name: 'GLOBAL', fields: 'VALUE_STARS', group_split_type: 'REGION_SECTOR_SIZE' });
    assert.deepEqual([finest[isin(1)], finest[isin(9)], finest[isin(3)]], [{ VALUE_STARS: 2 }, { VALUE_STARS: 4 }, { VALUE_STARS: 3 }]);
  });

  it('answers only the instruments of the universe, ranked among the normalization universe', async () => {
    // ROBO = I1, I2, I3, I9, I10, I11. Among ROBO itself: 10, 20, 30, 90, 100 → 1..5.
    assert.deepEqual(await stars(b, { universe_name: 'ROBO', fields: 'VALUE_STARS' }), byNumber('VALUE_STARS', { 1: 1, 2: 2, 3: 3, 9: 4, 10: 5, 11: null }));
    // The same instruments ranked among GLOBAL keep their GLOBAL stars.
    const amongGlobal = byNumber('VALUE_STARS', { 1: 1, 2: 1, 3: 2, 9: 5, 10: 5, 11: null });
    assert.deepEqual(await stars(b, { universe_name: 'ROBO', normalization_universe: 'GLOBAL', fields: 'VALUE_STARS' }), amongGlobal);
    assert.deepEqual(await stars(b, { universe_name: 'GLOBAL', instrument_universe: 'ROBO', fields: 'VALUE_STARS' }), amongGlobal);
  });

  it('places an instrument outside the normalization universe within its distribution', async () => {
    // I5 (50) among ROBO's 10, 20, 30, 90, 100: three below, none equal → 1 + ⌊5·3/5⌋ = 4.
    const data = await stars(b, { universe_name: 'GLOBAL', normalization_universe: 'ROBO', fields: 'VALUE_STARS' });
    assert.deepEqual(data[isin(5)], { VALUE_STARS: 4 });
    assert.deepEqual(data[isin(1)], { VALUE_STARS: 1 });
  });

  it("adds a tenant's own members to a platform universe of the same name, and never shows them to another tenant", async () => {
    // A's ROBO = the platform's (I1 10, I2 20, I3 30, I9 90, I10 100, I11 null) and I5 50, I6 60:
    // seven values → 1 + ⌊5·(2k+1)/14⌋ = 1, 2, 2, 3, 4, 4, 5. B still sees the platform ROBO.
    assert.deepEqual(
      await stars(a, { universe_name: 'ROBO', fields: 'VALUE_STARS' }),
      byNumber('VALUE_STARS', { 1: 1, 2: 2, 3: 2, 5: 3, 6: 4, 9: 4, 10: 5, 11: null }),
    );
    assert.deepEqual(Object.keys(await stars(b, { universe_name: 'ROBO', fields: 'VALUE_STARS' })), [1, 2, 3, 9, 10, 11].map(isin));
    // MINE holds an instrument the reference data does not know: it is answered, with null stars.
    assert.deepEqual(await stars(a, { universe_name: 'MINE', fields: 'VALUE_STARS' }), {
      ...byNumber('VALUE_STARS', { 7: 2, 8: 4 }),
      [unknownIsin]: { VALUE_STARS: null },
    });
    assertProblem(await xray(b, { universe_name: 'MINE', fields: 'VALUE_STARS' }), 404, 'not_found');
  });

  it('answers the requested fields only, in any number', async () => {
    const data = await stars(b, { universe_name: 'ROBO', fields: ['GROWTH_STARS', 'VALUE_STARS', 'DIVIDEND_STARS'] });
    // ROBO's GROWTH: 4, 5, 5, 5, 7 (I9), 8 → I9 has five at or below, one equal: 1 + ⌊5·4.5/6⌋ = 4.
    // No DIVIDEND metric in the fixture: null, not a guess.
    assert.deepEqual(data[isin(9)], { GROWTH_STARS: 4, VALUE_STARS: 4, DIVIDEND_STARS: null });
    assert.deepEqual(Object.keys(data[isin(1)]), ['GROWTH_STARS', 'VALUE_STARS', 'DIVIDEND_STARS']);
  });

  it('refuses an unknown factor (422 unknown_field) and an unknown universe (404)', async () => {
    const res = await xray(b, { universe_name: 'GLOBAL', fields: ['VALUE_STARS', 'PRICE'] });
    assertProblem(res, 422, 'unknown_field');
    assert.deepEqual(res.body.errors[0].loc, ['query', 'fields', 1]);
    assert.match(res.body.detail, /VALUE_STARS, GROWTH_STARS/);
    assertProblem(await xray(b, { universe_name: 'NOPE', fields: 'VALUE_STARS' }), 404, 'not_found');
    assertProblem(await xray(b, { universe_name: 'GLOBAL', normalization_universe: 'NOPE', fields: 'VALUE_STARS' }), 404, 'not_found');
    assertProblem(await xray(b, { universe_name: 'GLOBAL', fields: 'VALUE_STARS', group_split_type: 'COUNTRY' }), 400, 'invalid_parameter');
  });
});

describe('X-Ray cache', () => {
  let dir: string;
  let store: DuckStore;
  const tenant = 'cache-tenant';
  const value = (table: Map<string, Uint8Array>, n: number) => table.get(isin(n))?.[0];

  beforeEach(async () => {
    dir = await mkdtemp(join(testWorkDir(), 'xray-cache-'));
    await buildFixtureReference(join(dir, 'reference'));
    store = await openDuckStore({ path: join(dir, 'replica.duckdb'), referenceDir: join(dir, 'reference') });
  });
  afterEach(() => store.close());

  it('serves repeated requests from memory, per tenant and parameters', async () => {
    const xray = new XrayService(store);
    const first = await xray.universeStars(tenant, { universe: 'GLOBAL' });
    assert.equal(await xray.universeStars(tenant, { universe: 'GLOBAL' }), first);
    assert.deepEqual([xray.stats().hits, xray.stats().misses], [1, 1]);
    await xray.universeStars(tenant, { universe: 'GLOBAL', split: 'SECTOR' });
    await xray.universeStars('other-tenant', { universe: 'GLOBAL' });
    assert.deepEqual([xray.stats().hits, xray.stats().misses], [1, 3]);
  });

  it('recomputes when the reference data version changes', async () => {
    const xray = new XrayService(store);
    assert.equal(value(await xray.universeStars(tenant, { universe: 'GLOBAL' }), 1), 1);
    await new Promise((r) => setTimeout(r, 5)); // the next version sorts after the first
    // New data: I1's value becomes the largest.
    await buildFixtureReference(
      join(dir, 'reference'),
      INSTRUMENTS.map((i) => (i.isin === isin(1) ? { ...i, metrics: { value: 1000, growth: 5 } } : i)),
    );
    assert.equal(await store.reload(), true);
    assert.equal(value(await xray.universeStars(tenant, { universe: 'GLOBAL' }), 1), 5);
    assert.equal(xray.stats().misses, 2);
    assert.equal(xray.stats().entries, 1);
  });

  it("recomputes when the tenant's universes change", async () => {
    // Tenant universes live in Postgres; the replica's cache of them follows the tenant's version.
    const database = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      await createTenant(database.db, { id: tenant });
      const tenants = new TenantCache(pool, store, createLogger('test', 'error'));
      const xray = new XrayService(store);
      assert.equal((await xray.universeStars(tenant, { universe: 'ROBO' }, await tenants.ensureFresh(tenant))).size, 6);
      await seedTenantUniverses(database, [{ tenant, name: 'ROBO', isins: [isin(4)] }]);
      const robo = await xray.universeStars(tenant, { universe: 'ROBO' }, await tenants.ensureFresh(tenant));
      assert.equal(robo.size, 7);
      assert.ok(robo.has(isin(4)));
      assert.equal(xray.stats().hits, 0);
    } finally {
      await pool.end();
      await database.drop();
    }
  });

  it('keeps at most the configured number of entries, dropping the least recently used', async () => {
    const xray = new XrayService(store, { entries: 2, rows: 1_000 });
    await xray.universeStars(tenant, { universe: 'GLOBAL' });
    await xray.universeStars(tenant, { universe: 'ROBO' });
    await xray.universeStars(tenant, { universe: 'GLOBAL' }); // hit: GLOBAL is now the most recent
    await xray.universeStars(tenant, { universe: 'GLOBAL', split: 'SIZE' }); // evicts ROBO
    assert.equal(xray.stats().entries, 2);
    await xray.universeStars(tenant, { universe: 'GLOBAL' });
    assert.equal(xray.stats().hits, 2);
    await xray.universeStars(tenant, { universe: 'ROBO' });
    assert.deepEqual([xray.stats().hits, xray.stats().misses], [2, 4]);
  });

  it('over HTTP: a new reference file replaces cached stars without a restart', async () => {
    const fx = await startFixturePlatform([], { REFERENCE_RELOAD_MS: '50' });
    try {
      const t = await fx.platform.tenant();
      const ask = () =>
        call(`${fx.platform.dataUrl}/xray/universe/?universe_name=GLOBAL&fields=VALUE_STARS`, {
          headers: { 'x-tenant-id': t.tenantId, 'x-api-key': t.apiKey },
        });
      assert.equal((await ask()).body[0].data[isin(1)].VALUE_STARS, 1);
      assert.equal((await ask()).body[0].data[isin(1)].VALUE_STARS, 1);
      await new Promise((r) => setTimeout(r, 5));
      await buildFixtureReference(
        fx.referenceDir,
        INSTRUMENTS.map((i) => (i.isin === isin(1) ? { ...i, metrics: { value: 1000, growth: 5 } } : i)),
      );
      const deadline = Date.now() + 10_000;
      let stars = 1;
      while (stars !== 5 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        stars = (await ask()).body[0].data[isin(1)].VALUE_STARS;
      }
      assert.equal(stars, 5);
    } finally {
      await fx.platform.stop();
    }
  });
});
