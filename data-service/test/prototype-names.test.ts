import assert from 'node:assert/strict';
import { tableFromIPC } from 'apache-arrow';
import fc from 'fast-check';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { PROTOTYPE_NAMES, prototypeSnapshot } from '@platform/test-support/prototype-names';
import { dataClient } from './support/data-client.ts';

const q = encodeURIComponent;
const CUSTOM_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
type Answer = Awaited<ReturnType<ReturnType<typeof dataClient>['get']>>;
const locs = (res: Answer): unknown[] => res.body.errors.map((e: { loc: unknown }) => e.loc);

/**
 * Names that every plain object answers for (`constructor`, `__proto__`, `toString`…) wherever
 * the data interface takes a name: reference fields and custom keys, X-Ray factors, search
 * fields and sorting, inspiration ids, custom data keys and CSV headers, asset classes. Each is a
 * 4xx problem at the name, never a 500, and changes nothing; a custom key that the contract allows
 * (`constructor`, `toString`) is a key like any other (docs/adr/0019-no-5xx-input.md).
 */
describe('data interface: names of Object.prototype are unknown names', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let client: ReturnType<typeof dataClient>;
  let isin: string;
  const prototype = prototypeSnapshot();
  const stored = async () => {
    const res = await client.post('/data/custom/reference/query/', {});
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };
  let initial: unknown;

  before(async () => {
    platform = await startTestPlatform();
    client = dataClient(platform.dataUrl, await platform.tenant());
    const universe = await client.get('/data/reference/universe/?universe_name=GLOBAL&fields=ISIN');
    assert.equal(universe.status, 200, universe.text);
    isin = Object.keys(universe.body.data)[0]!;
    assert.equal((await client.post('/data/custom/reference/batch/', { data: [{ instrument_id: isin, reference_data: { note: 'kept' } }] })).status, 200);
    initial = await stored();
  });
  after(() => platform?.stop());

  async function unchanged() {
    assert.deepEqual(await stored(), initial);
    assert.deepEqual(prototypeSnapshot(), prototype);
  }

  /** Each place a name is taken, the request naming it there, and the problem it must get. */
  const places: Record<string, (name: string) => { send: () => Promise<Answer>; status: number; code: string; loc: unknown[] }> = {
    'reference fields (body)': (name) => ({
      send: () => client.post('/data/reference/query/', { instrument_ids: [isin], fields: ['NAME', name] }),
      status: 422,
      code: 'validation_failed',
      loc: ['body', 'fields', 1],
    }),
    'reference fields (query)': (name) => ({
      send: () => client.get(`/data/reference/universe/?universe_name=GLOBAL&fields=NAME&fields=${q(name)}`),
      status: 400,
      code: 'invalid_parameter',
      loc: ['query', 'fields', 1],
    }),
    'custom keys of fields_extra (body)': (name) => ({
      send: () => client.post('/data/reference/query/', { instrument_ids: [isin], fields: ['NAME'], fields_extra: ['note', name] }),
      ...(CUSTOM_KEY.test(name) ? { status: 422, code: 'unknown_field' } : { status: 422, code: 'validation_failed' }),
      loc: ['body', 'fields_extra', 1],
    }),
    'custom keys of fields_extra (query)': (name) => ({
      send: () => client.get(`/data/reference/universe/?universe_name=GLOBAL&fields=NAME&fields_extra=note&fields_extra=${q(name)}`),
      ...(CUSTOM_KEY.test(name) ? { status: 422, code: 'unknown_field' } : { status: 400, code: 'invalid_parameter' }),
      loc: ['query', 'fields_extra', 1],
    }),
    'X-Ray factors': (name) => ({
      send: () => client.get(`/xray/universe/?universe_name=GLOBAL&fields=VALUE_STARS&fields=${q(name)}`),
      status: 400,
      code: 'invalid_parameter',
      loc: ['query', 'fields', 1],
    }),
    'X-Ray group split': (name) => ({
      send: () => client.get(`/xray/universe/?universe_name=GLOBAL&fields=VALUE_STARS&group_split_type=${q(name)}`),
      status: 400,
      code: 'invalid_parameter',
      loc: ['query', 'group_split_type'],
    }),
    'search group split': (name) => ({
      send: () => client.post('/smart-search/', { query: {}, xray_parameters: { group_split_type: name } }),
      status: 422,
      code: 'validation_failed',
      loc: ['body', 'xray_parameters', 'group_split_type'],
    }),
    'universe name': (name) => ({
      send: () => client.get(`/data/reference/universe/?universe_name=${q(name)}&fields=NAME`),
      ...(/^[A-Za-z0-9_-]{1,64}$/.test(name)
        ? { status: 404, code: 'not_found', loc: [] }
        : { status: 400, code: 'invalid_parameter', loc: ['query', 'universe_name'] }),
    }),
    'X-Ray universe name': (name) => ({
      send: () => client.get(`/xray/universe/?universe_name=GLOBAL&normalization_universe=${q(name)}&fields=VALUE_STARS`),
      ...(/^[A-Za-z0-9_-]{1,64}$/.test(name)
        ? { status: 404, code: 'not_found', loc: [] }
        : { status: 400, code: 'invalid_parameter', loc: ['query', 'normalization_universe'] }),
    }),
    'search filter, reference': (name) => ({
      send: () => client.post('/smart-search/', { query: { reference: `$PRICE > 0 & $${name} >= 1` } }),
      status: 422,
      code: 'unknown_field',
      loc: ['body', 'query', 'reference'],
    }),
    'search filter, xray': (name) => ({
      send: () => client.post('/smart-search/', { query: { xray: `$${name} >= 1` } }),
      status: 422,
      code: 'unknown_field',
      loc: ['body', 'query', 'xray'],
    }),
    'search filter, derived': (name) => ({
      send: () => client.post('/smart-search/', { query: { derived: `$${name} > 0` } }),
      status: 422,
      code: 'unknown_field',
      loc: ['body', 'query', 'derived'],
    }),
    'search sorting': (name) => ({
      send: () => client.post('/smart-search/', { query: {}, sorting_variables: { xray: [name], sorting_order: [name] } }),
      status: 422,
      code: 'validation_failed',
      loc: ['body', 'sorting_variables', 'xray', 0],
    }),
    'custom key of a batch': (name) => ({
      send: () => client.post('/data/custom/reference/batch/', { data: [{ instrument_id: isin, reference_data: { note: 'changed', [name]: 'x' } }] }),
      status: 422,
      code: 'validation_failed',
      loc: ['body', 'data', 0, 'reference_data', name],
    }),
    'custom key of a CSV header': (name) => ({
      send: () => client.postText('/data/custom/reference/csv/', `instrument_id,note,${name}\n${isin},changed,x\n`, 'text/csv'),
      status: 422,
      code: 'validation_failed',
      loc: ['body', 1, name],
    }),
    'custom keys to read': (name) => ({
      send: () => client.post('/data/custom/reference/query/', { keys: ['note', name] }),
      ...(CUSTOM_KEY.test(name) ? { status: 422, code: 'unknown_field' } : { status: 422, code: 'validation_failed' }),
      loc: ['body', 'keys', 1],
    }),
    'asset class of a simulation': (name) => ({
      send: () => client.post('/performance/future/', { asset_classes: { EQUITY: [0, 1], [name]: [0, 1] }, start_date: '2024-01-01', end_date: '2025-01-01' }),
      status: 422,
      code: 'validation_failed',
      loc: ['body', 'asset_classes', name],
    }),
  };

  it('in every place a name is taken: a 4xx problem with the documented code at the name, and nothing changes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROTOTYPE_NAMES), fc.constantFrom(...Object.keys(places)), async (name, place) => {
        const expected = places[place]!(name);
        // A custom key the contract allows is stored like any other: the batch and the CSV take it (below).
        fc.pre(!(CUSTOM_KEY.test(name) && (place === 'custom key of a batch' || place === 'custom key of a CSV header')));
        const res = await expected.send();
        assertProblem(res, expected.status, expected.code);
        // A 404 names no field: the name is a value (a universe) that is not there.
        if (expected.status !== 404)
          assert.ok(
            locs(res).some((loc) => JSON.stringify(loc) === JSON.stringify(expected.loc)),
            `${place} ${name}: ${JSON.stringify(locs(res))} (${res.body.detail})`,
          );
        else assert.ok(res.body.detail.includes(name), res.body.detail);
        await unchanged();
      }),
      { numRuns: 150 },
    );
  });

  it('every name in each place once', async () => {
    for (const name of PROTOTYPE_NAMES) {
      for (const [place, make] of Object.entries(places)) {
        if (CUSTOM_KEY.test(name) && (place === 'custom key of a batch' || place === 'custom key of a CSV header')) continue;
        const expected = make(name);
        const res = await expected.send();
        assert.equal(res.status, expected.status, `${place} ${name}: ${res.text}`);
        assert.equal(res.body.code, expected.code, `${place} ${name}: ${res.text}`);
      }
    }
    await unchanged();
  });

  it('an inspiration id that is a member name: 404 for one that does not exist, and none is listed', async () => {
    const listed = (await client.get('/inspiration/definition/')).body;
    for (const name of PROTOTYPE_NAMES) {
      const res = await client.get(`/inspiration/?id=${q(name)}`);
      assert.ok(res.status === 404 || res.status === 400, `${name}: ${res.text}`);
      assertProblem(res, res.status, res.status === 404 ? 'not_found' : 'invalid_parameter');
    }
    assert.deepEqual((await client.get('/inspiration/definition/')).body, listed);
    await unchanged();
  });

  it('a custom key the contract allows (constructor, toString, valueOf…) is stored, read and answered as any other key', async () => {
    const keys = PROTOTYPE_NAMES.filter((name) => CUSTOM_KEY.test(name));
    assert.ok(keys.includes('constructor') && keys.includes('toString'));
    const values = Object.fromEntries(keys.map((k, i) => [k, i]));
    assert.equal((await client.post('/data/custom/reference/batch/', { data: [{ instrument_id: isin, reference_data: values }] })).status, 200);
    const csv = await client.postText('/data/custom/reference/csv/', `instrument_id,valueOf\n${isin},csv\n`, 'text/csv');
    assert.equal(csv.status, 200, csv.text);
    const expected = { ...values, valueOf: 'csv', note: 'kept' };
    const sorted = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    assert.deepEqual(sorted((await stored())[isin]), sorted(expected));
    const read = await client.post('/data/custom/reference/query/', { keys: ['constructor', 'toString'] });
    assert.deepEqual(read.body.data, { [isin]: { constructor: values.constructor, toString: values.toString } });
    const answer = await client.post('/data/reference/query/', { instrument_ids: [isin], fields: ['NAME'], fields_extra: keys });
    assert.equal(answer.status, 200, answer.text);
    const row = answer.body.data[isin];
    for (const k of keys) assert.deepEqual(row[k], expected[k as keyof typeof expected], k);
    const arrow = await client.bytes('/data/reference/query/', 'application/vnd.apache.arrow.stream', {
      instrument_ids: [isin],
      fields: ['NAME'],
      fields_extra: keys,
    });
    assert.equal(arrow.status, 200);
    const table = tableFromIPC(arrow.bytes);
    assert.deepEqual(
      table.schema.fields.map((f) => f.name),
      ['instrument_id', 'name', ...keys],
    );
    for (const k of keys) assert.equal(String(table.getChild(k)!.get(0)), String(expected[k as keyof typeof expected]), k);
    assert.equal((await client.post('/data/custom/reference/remove/', { instrument_ids: [isin], keys })).status, 200);
    assert.deepEqual(await stored(), initial);
    assert.deepEqual(prototypeSnapshot(), prototype);
  });

  it('as the name of a request header: answered as without it', async () => {
    for (const name of PROTOTYPE_NAMES) {
      const res = await client.get('/data/reference/universe/?universe_name=GLOBAL&fields=ISIN', { [name]: 'x' });
      assert.equal(res.status, 200, `${name}: ${res.text}`);
      assert.ok(Object.hasOwn(res.body.data, isin));
      assertProblem(
        await client.post('/data/custom/reference/batch/', { data: [] }, { [name]: 'x', 'idempotency-key': `k-${name}` }),
        422,
        'validation_failed',
      );
    }
    await unchanged();
  });
});
