import assert from 'node:assert/strict';
import { assertProblem, call } from '@platform/test-support/http';
import type { TestTenant } from '@platform/test-support/platform';
import { BUILTIN_INSPIRATIONS } from '../src/inspiration/builtins.ts';
import { isin, startFixturePlatform, tenantId, type FixturePlatform } from './xray-fixture.ts';

describe('inspirations', () => {
  let fx: FixturePlatform;
  let a: TestTenant;
  let b: TestTenant;
  const idA = tenantId('ia');
  const entries = (...numbers: number[]) => numbers.map((n) => ({ isin: isin(n), name: `Instrument ${n}` }));
  const picks = {
    name: 'House picks',
    description: 'Cheap and growing.',
    type: 'inspiration',
    query: { xray: '$VALUE_STARS >= 4 & $GROWTH_STARS == 5' },
  };

  const as = (tenant: TestTenant) => ({ 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey });
  const definitions = (tenant: TestTenant) => call(`${fx.platform.dataUrl}/inspiration/definition/`, { headers: as(tenant) });
  const inspirations = (tenant: TestTenant, ids: string[] = []) =>
    call(`${fx.platform.dataUrl}/inspiration/${ids.length ? `?${ids.map((id) => `id=${id}`).join('&')}` : ''}`, { headers: as(tenant) });
  const put = (tenant: TestTenant, id: string, body: unknown) =>
    call(`${fx.platform.dataUrl}/inspiration/definition/${id}`, { method: 'PUT', body, headers: as(tenant) });
  const remove = (tenant: TestTenant, id: string) => call(`${fx.platform.dataUrl}/inspiration/definition/${id}`, { method: 'DELETE', headers: as(tenant) });
  const ids = (list: { id: string }[]) => list.map((d) => d.id);

  before(async () => {
    // A's own universe holds an instrument without reference data; its stars are null, so it joins no inspiration.
    fx = await startFixturePlatform([{ tenant: idA, name: 'MINE', isins: [isin(7), 'XZ0000000099'] }]);
    a = await fx.platform.tenant(idA);
    b = await fx.platform.tenant();
  });
  after(() => fx.platform.stop());

  it('lists the platform definitions, ordered by id, without instruments', async () => {
    const res = await definitions(b);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(ids(res.body), ['high_dividend', 'momentum_leaders', 'quality', 'quality_dividends', 'small_caps', 'value']);
    assert.deepEqual(
      res.body,
      [...BUILTIN_INSPIRATIONS].sort((x, y) => x.id.localeCompare(y.id)),
    );
    assert.ok(res.body.every((d: { custom: boolean; instruments?: unknown }) => d.custom === false && d.instruments === undefined));
  });

  it("computes each inspiration's instruments from its X-Ray filter over the tenant's universes", async () => {
    const res = await inspirations(b);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(ids(res.body), ['high_dividend', 'momentum_leaders', 'quality', 'quality_dividends', 'small_caps', 'value']);
    const byId = Object.fromEntries(res.body.map((i: { id: string; instruments: unknown }) => [i.id, i.instruments]));
    // VALUE stars over all twelve: I7, I8 → 4; I9, I10 → 5. The fixture has no dividend, momentum or size metrics.
    assert.deepEqual(byId.value, entries(7, 8, 9, 10));
    assert.deepEqual(byId.high_dividend, []);
    assert.deepEqual(byId.small_caps, []);
  });

  it('returns only the inspirations asked for, and 404 for an id the tenant does not have', async () => {
    const res = await inspirations(b, ['value']);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, [{ ...BUILTIN_INSPIRATIONS.find((d) => d.id === 'value'), instruments: entries(7, 8, 9, 10) }]);
    const missing = await inspirations(b, ['value', 'nothing_here']);
    assertProblem(missing, 404, 'not_found');
    assert.match(missing.body.detail, /nothing_here/);
  });

  it('creates (201 with Location) and replaces (200) a custom definition of the tenant', async () => {
    const created = await put(a, 'house_picks', picks);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers.get('location'), '/inspiration/definition/house_picks');
    assert.deepEqual(created.body, { id: 'house_picks', ...picks, custom: true });
    const replaced = await put(a, 'house_picks', { ...picks, name: 'House picks (new)' });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.name, 'House picks (new)');
    const listed = (await definitions(a)).body;
    assert.deepEqual(ids(listed), ['high_dividend', 'house_picks', 'momentum_leaders', 'quality', 'quality_dividends', 'small_caps', 'value']);
    assert.deepEqual(listed[1], { id: 'house_picks', ...picks, name: 'House picks (new)', custom: true });
    // GROWTH stars 5 over all: I7, I8; with VALUE ≥ 4 both stay.
    assert.deepEqual((await inspirations(a, ['house_picks'])).body[0].instruments, entries(7, 8));
  });

  it("keeps tenants apart: B never sees A's definitions, and the same id is B's own", async () => {
    await put(a, 'only_a', { ...picks, query: { xray: '$VALUE_STARS == 5' } });
    assert.ok(!ids((await definitions(b)).body).includes('only_a'));
    assert.ok(!ids((await inspirations(b)).body).includes('only_a'));
    assertProblem(await inspirations(b, ['only_a']), 404, 'not_found');
    assertProblem(await remove(b, 'only_a'), 404, 'not_found');
    const own = await put(b, 'only_a', { ...picks, name: "B's", query: { xray: '$VALUE_STARS == 1' } });
    assert.equal(own.status, 201, own.text);
    assert.deepEqual((await inspirations(b, ['only_a'])).body[0].instruments, entries(1, 2));
    assert.deepEqual((await inspirations(a, ['only_a'])).body[0].instruments, entries(9, 10));
    assert.equal((await definitions(a)).body.find((d: { id: string }) => d.id === 'only_a').name, 'House picks');
  });

  it('deletes a custom definition (204); then it is gone', async () => {
    await put(a, 'short_lived', picks);
    const res = await remove(a, 'short_lived');
    assert.equal(res.status, 204, res.text);
    assert.ok(!ids((await definitions(a)).body).includes('short_lived'));
    assertProblem(await inspirations(a, ['short_lived']), 404, 'not_found');
    assertProblem(await remove(a, 'short_lived'), 404, 'not_found');
  });

  it('refuses to change or delete a platform inspiration (409 state_conflict)', async () => {
    assertProblem(await put(a, 'value', picks), 409, 'state_conflict');
    assertProblem(await remove(a, 'value'), 409, 'state_conflict');
    assert.deepEqual((await inspirations(a, ['value'])).body[0].query, { xray: '$VALUE_STARS >= 4' });
  });

  it('checks the filter on write: 400 invalid_filter with the position, 422 unknown_field', async () => {
    const bad = await put(a, 'broken', { ...picks, query: { xray: '$VALUE_STARS >= 4 && $GROWTH_STARS > 2' } });
    assertProblem(bad, 400, 'invalid_filter');
    assert.equal(bad.body.position, 19);
    assert.deepEqual(bad.body.errors[0].loc, ['body', 'query', 'xray']);
    const unknown = await put(a, 'broken', { ...picks, query: { xray: '$PRICE > 10' } });
    assertProblem(unknown, 422, 'unknown_field');
    assert.match(unknown.body.detail, /'PRICE'/);
    assertProblem(await put(a, 'broken', { ...picks, type: 'collection' }), 422, 'validation_failed');
    assert.ok(!ids((await definitions(a)).body).includes('broken'));
  });
});
