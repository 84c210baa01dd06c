import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { testWorkDir } from '@platform/test-support/database';
import { openDuckStore, type DuckStore } from '../src/store/duckdb.ts';
import { encodeXrayAnswer, starsOf, type StarsTable } from '../src/xray/answer.ts';
import { FACTOR_NAMES, FACTORS, type XrayFactor } from '../src/xray/factors.ts';
import { XrayService } from '../src/xray/xray.ts';
import { buildFixtureReference } from './xray-fixture.ts';

/** The answer as the handler built it before it was encoded directly: an object, then JSON.stringify. */
function stringified(table: StarsTable, fields: readonly XrayFactor[]): string {
  const columns = [...new Set(fields)].map((field) => [field, FACTORS.findIndex((f) => f.field === field)] as const);
  const data: Record<string, Record<string, number | null>> = {};
  for (const [isin, values] of table) data[isin] = Object.fromEntries(columns.map(([field, i]) => [field, starsOf(values, i)]));
  return JSON.stringify([{ data }]);
}

function table(isins: string[], seed: number): StarsTable {
  let state = seed;
  const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) % 6;
  return new Map(isins.map((isin) => [isin, Uint8Array.from(FACTORS, () => next())]));
}

describe('X-Ray answer encoding', () => {
  const isins = Array.from({ length: 300 }, (_, k) => `XA${String(k).padStart(10, '0')}`);

  it('writes the bytes JSON.stringify gives, for any field list (order kept, repeats once, none)', () => {
    const lists: XrayFactor[][] = [
      FACTOR_NAMES as XrayFactor[],
      ['DIVIDEND_STARS', 'VALUE_STARS'],
      ['GROWTH_STARS', 'GROWTH_STARS', 'SIZE_STARS', 'GROWTH_STARS'],
      ['MOMENTUM_STARS'],
      [],
    ];
    for (const [n, fields] of lists.entries()) {
      const stars = table(isins, n + 1);
      assert.equal(encodeXrayAnswer(stars, fields).toString('utf8'), stringified(stars, fields), fields.join(','));
    }
    assert.equal(encodeXrayAnswer(new Map(), ['VALUE_STARS']).toString('utf8'), '[{"data":{}}]');
  });

  it('keeps JSON.stringify for keys an object would reorder or escape', () => {
    for (const odd of ['123', '0', 'a"b', '__proto__', 'Ünïcode', '']) {
      const stars = table([isins[0]!, odd, isins[1]!], 7);
      assert.equal(encodeXrayAnswer(stars, ['VALUE_STARS', 'GROWTH_STARS']).toString('utf8'), stringified(stars, ['VALUE_STARS', 'GROWTH_STARS']), odd);
    }
  });
});

describe('X-Ray answer cache', () => {
  let store: DuckStore;
  const tenant = 'answer-tenant';
  const fields: XrayFactor[] = ['GROWTH_STARS', 'VALUE_STARS'];

  beforeEach(async () => {
    const dir = await mkdtemp(join(testWorkDir(), 'xray-answer-'));
    await buildFixtureReference(join(dir, 'reference'));
    store = await openDuckStore({ path: join(dir, 'replica.duckdb'), referenceDir: join(dir, 'reference') });
  });
  afterEach(() => store.close());

  it('answers the encoded stars, and the same bytes again from memory per field list', async () => {
    const xray = new XrayService(store);
    const first = await xray.universeAnswer(tenant, { universe: 'ROBO' }, fields);
    assert.equal(first.toString('utf8'), stringified(await xray.universeStars(tenant, { universe: 'ROBO' }), fields));
    const misses = xray.stats().misses;
    assert.equal(await xray.universeAnswer(tenant, { universe: 'ROBO' }, fields), first);
    assert.equal(xray.stats().misses, misses);
    // Another field list is another answer, from the cached stars.
    const other = await xray.universeAnswer(tenant, { universe: 'ROBO' }, ['VALUE_STARS']);
    assert.equal(other.toString('utf8'), stringified(await xray.universeStars(tenant, { universe: 'ROBO' }), ['VALUE_STARS']));
    assert.equal(xray.stats().misses, misses + 1);
    assert.equal(xray.stats().entries, 3);
  });

  it('counts answers within the cache bounds: their bytes / 100 as rows', async () => {
    // ROBO: 6 instruments, a stars table weighs 7; its answer of two fields is 315 bytes: 4 + 1.
    const xray = new XrayService(store, { entries: 10, rows: 12 });
    const answer = await xray.universeAnswer(tenant, { universe: 'ROBO' }, fields);
    assert.equal(answer.byteLength, 315);
    assert.deepEqual([xray.stats().entries, xray.stats().weight], [2, 12]);
    // Another answer (from the stars, which that refreshes) does not fit beside both: the least
    // recently used, the first answer, goes.
    await xray.universeAnswer(tenant, { universe: 'ROBO' }, ['VALUE_STARS']);
    assert.deepEqual([xray.stats().entries, xray.stats().weight], [2, 7 + 4]); // 213 bytes: 3 + 1
    const misses = xray.stats().misses;
    assert.deepEqual(await xray.universeAnswer(tenant, { universe: 'ROBO' }, fields), answer);
    assert.equal(xray.stats().misses, misses + 1);
  });
});
