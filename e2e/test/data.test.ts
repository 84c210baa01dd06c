import assert from 'node:assert/strict';
import { tableFromIPC } from 'apache-arrow';
import type { components } from '@platform/api-types/data';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { dataClient } from '../src/clients.ts';
import { contractShapes, type ClientResult, type ContractShapes } from '../src/contract-shapes.ts';

type Client = ReturnType<typeof dataClient>;
type ReferenceRecord = components['schemas']['ReferenceRecord'];
type ReferenceData = components['schemas']['ReferenceDataResponse'];
type SearchRequest = components['schemas']['SmartSearchRequest'];
type Stars = Record<string, Record<string, number | null>>;

const ARROW_TYPES = ['application/vnd.apache.arrow.stream', 'application/octet-stream'] as const;
const UNIVERSES = ['GLOBAL', 'DEFAULT', 'ROBO'] as const;
/** Matches the contract's ISIN pattern; the sample universe has no instrument in country ZZ. */
const UNKNOWN_ISIN = 'ZZ0000000000';

const sorted = (values: Iterable<string>) => [...values].sort();
/** An Arrow cell as the JSON answer writes it: a Date32 (a Date or epoch milliseconds) as YYYY-MM-DD. */
const jsonOf = (value: unknown, type: string): unknown => {
  if (value === null || value === undefined) return null;
  if (type.startsWith('Date')) return new Date(value instanceof Date ? value.getTime() : Number(value)).toISOString().slice(0, 10);
  return value;
};
/** The order the contract gives smart search: by each key, descending unless ascending, nulls last; ties by ISIN. */
const searchOrder = (keys: ((isin: string) => number | null)[], ascending: boolean) => (a: string, b: string) => {
  for (const key of keys) {
    const [x, y] = [key(a), key(b)];
    if (x === y) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    return ascending ? x - y : y - x;
  }
  return a < b ? -1 : a > b ? 1 : 0;
};

describe('data interface through the generated client, on the sample universe', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let shapes: ContractShapes;
  let client: Client;
  let fields: string[];
  let factors: string[];
  /** GLOBAL with every reference field, as the universe listing answers it. */
  let global: Record<string, ReferenceRecord>;
  const universes: Record<string, string[]> = {};
  /** One stock, one bond and one ETF of the sample, and an ISIN the sample does not have. */
  let picks: string[];

  const newClient = async () => {
    const tenant = await platform.tenant();
    return dataClient(platform.dataUrl, tenant.tenantId, tenant.apiKey);
  };
  const xray = async (
    query: { universe_name: string; normalization_universe?: string; instrument_universe?: string; group_split_type?: components['schemas']['GroupSplitType'] },
    c = client,
  ) => {
    const result = await c.GET('/xray/universe/', { params: { query: { fields: factors, ...query } } });
    return shapes.ok('/xray/universe/', 'get', result)[0]!.data as Stars;
  };
  /** A JSON reference answer, checked (its generated type also admits the Arrow representation). */
  const reference = (result: ClientResult, path: '/data/reference/query/' | '/data/reference/universe/' = '/data/reference/query/') =>
    shapes.ok(path, path === '/data/reference/query/' ? 'post' : 'get', result) as ReferenceData;
  const search = async (body: SearchRequest, c = client) => shapes.ok('/smart-search/', 'post', await c.POST('/smart-search/', { body })).data;

  before(async () => {
    [platform, shapes] = await Promise.all([startTestPlatform(), contractShapes('data')]);
    client = await newClient();
    fields = shapes.schema('ReferenceField').enum as string[];
    factors = shapes.schema('XrayFactor').enum as string[];
    for (const name of UNIVERSES) {
      const result = await client.GET('/data/reference/universe/', { params: { query: { universe_name: name, fields } } });
      const body = reference(result, '/data/reference/universe/');
      universes[name] = sorted(Object.keys(body.data));
      if (name === 'GLOBAL') global = body.data;
    }
    const first = (type: string) => universes.GLOBAL!.find((isin) => global[isin]!.instrument_type === type && global[isin]!.price !== null)!;
    picks = [first('STOCK'), first('BOND'), first('ETF'), UNKNOWN_ISIN];
    assert.ok(picks.every(Boolean) && !(UNKNOWN_ISIN in global), `sample picks: ${picks}`);
  });
  after(() => platform?.stop());

  it('lists GLOBAL, DEFAULT, ROBO and all of them together with every field, lower case; an unknown universe is a 404', async () => {
    assert.equal(universes.GLOBAL!.length, 400);
    for (const name of ['DEFAULT', 'ROBO']) {
      const members = universes[name]!;
      assert.ok(members.length > 0 && members.length < 400 && members.every((isin) => isin in global), `${name}: ${members.length} instruments of GLOBAL`);
    }
    assert.notDeepEqual(universes.DEFAULT, universes.ROBO);
    for (const [isin, record] of Object.entries(global)) {
      assert.deepEqual(
        Object.keys(record),
        fields.map((f) => f.toLowerCase()),
      );
      assert.equal(record.isin, isin);
    }
    const all = await client.GET('/data/reference/universe/', { params: { query: { fields: ['NAME', 'PRICE'] } } });
    const union = reference(all, '/data/reference/universe/').data;
    assert.deepEqual(sorted(Object.keys(union)), sorted(new Set(UNIVERSES.flatMap((u) => universes[u]!))));
    assert.deepEqual(union[picks[0]!], { name: global[picks[0]!]!.name, price: global[picks[0]!]!.price });

    const unknown = await client.GET('/data/reference/universe/', { params: { query: { universe_name: 'NO_SUCH_UNIVERSE', fields: ['NAME'] } } });
    shapes.problem('/data/reference/universe/', 'get', unknown, 404, 'not_found');
  });

  it('answers a reference query as {data: {isin: {field_lower: value}}, meta: null}, leaving out unknown instruments', async () => {
    const result = await client.POST('/data/reference/query/', {
      body: { instrument_ids: picks, fields: ['NAME', 'ASSET_CLASS', 'CURRENCY', 'PRICE', 'PRICE_DATE'], fields_extra: [] },
    });
    const body = reference(result);
    assert.equal(body.meta, null);
    assert.deepEqual(Object.keys(body.data), picks.slice(0, 3));
    for (const isin of picks.slice(0, 3)) {
      const g = global[isin]!;
      assert.deepEqual(body.data[isin], { name: g.name, asset_class: g.asset_class, currency: g.currency, price: g.price, price_date: g.price_date });
    }
    assert.notEqual(body.data[picks[1]!]!.asset_class, body.data[picks[0]!]!.asset_class, 'a bond and a stock differ in asset class');
  });

  it('answers the same query as an Arrow IPC stream, typed, whose values are the JSON values', async () => {
    const body = { instrument_ids: picks, fields, fields_extra: [] };
    const json = reference(await client.POST('/data/reference/query/', { body })).data;
    for (const accept of ARROW_TYPES) {
      const result = await client.POST('/data/reference/query/', { params: { header: { accept } }, body, parseAs: 'arrayBuffer' });
      assert.equal(result.response.status, 200);
      assert.equal(result.response.headers.get('content-type'), accept);
      const table = tableFromIPC(new Uint8Array(result.data!));
      const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)]));
      assert.deepEqual(
        table.schema.fields.map((f) => f.name),
        ['instrument_id', ...fields.map((f) => f.toLowerCase())],
      );
      assert.equal(types.instrument_id, 'Utf8');
      assert.equal(types.name, 'Utf8');
      // Categories are dictionary-encoded: each distinct value once, an index per row.
      for (const name of ['asset_class', 'currency', 'country', 'sector']) assert.match(types[name]!, /^Dictionary<Int(8|16|32), Utf8>$/, name);
      for (const name of ['market_cap', 'price', 'dividend_yield', 'ter', 'analyst_target_price']) assert.equal(types[name], 'Float64', name);
      assert.match(types.price_date!, /^Date32/);
      const rows = table.toArray().map((row) => Object.fromEntries(table.schema.fields.map((f) => [f.name, jsonOf(row[f.name], types[f.name]!)])));
      assert.deepEqual(
        rows.map((r) => r.instrument_id),
        picks.slice(0, 3),
        'one row per known instrument, in request order',
      );
      for (const { instrument_id, ...values } of rows) assert.deepEqual(values, json[instrument_id as string]);
    }
    const universe = await client.GET('/data/reference/universe/', {
      params: { query: { universe_name: 'ROBO', fields: ['NAME'] }, header: { accept: ARROW_TYPES[0] } },
      parseAs: 'arrayBuffer',
    });
    const robo = tableFromIPC(new Uint8Array(universe.data!));
    assert.deepEqual(
      robo.toArray().map((r) => r.instrument_id),
      universes.ROBO,
      'a universe answers by ISIN',
    );

    const unacceptable = await client.POST('/data/reference/query/', { params: { header: { accept: 'text/html' } }, body });
    shapes.problem('/data/reference/query/', 'post', unacceptable, 406, 'not_acceptable');
  });

  it('stores custom reference data by batch and CSV, reads it back (query, fields_extra, Arrow), removes and clears it', async () => {
    const c = await newClient();
    const [x, y, z] = picks;
    const batch = await c.POST('/data/custom/reference/batch/', {
      body: {
        data: [
          { instrument_id: x!, reference_data: { esg_score: 7.4, in_house_rating: 'A', restricted: false, sector: 'HOUSE_PICKS' } },
          { instrument_id: y!, reference_data: { esg_score: 6.1, in_house_rating: null } },
        ],
      },
    });
    assert.equal(shapes.ok('/data/custom/reference/batch/', 'post', batch).data.upserted, 6);
    // Z gets three values; Y's empty esg_score cell writes nothing, so Y keeps 6.1.
    const csv = `instrument_id,esg_score,in_house_rating,restricted\n${z},8.2,B,true\n${y},,C,false\n`;
    const upload = await c.POST('/data/custom/reference/csv/', { body: csv, bodySerializer: (b: string) => b, headers: { 'content-type': 'text/csv' } });
    assert.equal(shapes.ok('/data/custom/reference/csv/', 'post', upload).data.upserted, 5);

    const everything = shapes.ok('/data/custom/reference/query/', 'post', await c.POST('/data/custom/reference/query/', { body: {} }));
    assert.deepEqual(everything, {
      data: {
        [x!]: { esg_score: 7.4, in_house_rating: 'A', restricted: false, sector: 'HOUSE_PICKS' },
        [y!]: { esg_score: 6.1, in_house_rating: 'C', restricted: false },
        [z!]: { esg_score: 8.2, in_house_rating: 'B', restricted: true },
      },
      meta: null,
    });
    const some = await c.POST('/data/custom/reference/query/', { body: { instrument_ids: [x!, z!, UNKNOWN_ISIN], keys: ['esg_score'] } });
    assert.deepEqual(shapes.ok('/data/custom/reference/query/', 'post', some).data, { [x!]: { esg_score: 7.4 }, [z!]: { esg_score: 8.2 } });
    shapes.problem(
      '/data/custom/reference/query/',
      'post',
      await c.POST('/data/custom/reference/query/', { body: { keys: ['never_uploaded'] } }),
      422,
      'unknown_field',
    );

    // fields_extra reads the keys back; a custom key named like a field (sector) wins over the provider's value.
    const other = universes.GLOBAL!.find((isin) => !picks.includes(isin))!;
    const query = { instrument_ids: [x!, y!, z!, other], fields: ['NAME', 'SECTOR'], fields_extra: ['esg_score', 'in_house_rating', 'restricted'] };
    const read = reference(await c.POST('/data/reference/query/', { body: query })).data;
    assert.deepEqual(read[x!], { name: global[x!]!.name, sector: 'HOUSE_PICKS', esg_score: 7.4, in_house_rating: 'A', restricted: false });
    assert.deepEqual(read[z!], { name: global[z!]!.name, sector: global[z!]!.sector, esg_score: 8.2, in_house_rating: 'B', restricted: true });
    assert.deepEqual(read[other], { name: global[other]!.name, sector: global[other]!.sector, esg_score: null, in_house_rating: null, restricted: null });
    const arrow = await c.POST('/data/reference/query/', { params: { header: { accept: ARROW_TYPES[0] } }, body: query, parseAs: 'arrayBuffer' });
    const table = tableFromIPC(new Uint8Array(arrow.data!));
    assert.deepEqual(Object.fromEntries(table.schema.fields.slice(3).map((f) => [f.name, String(f.type)])), {
      esg_score: 'Float64',
      in_house_rating: 'Utf8',
      restricted: 'Bool',
    });
    assert.deepEqual(
      table.toArray().map((r) => [r.instrument_id, r.esg_score, r.restricted]),
      [
        [x, 7.4, false],
        [y, 6.1, false],
        [z, 8.2, true],
        [other, null, null],
      ],
    );
    const listed = await c.GET('/data/reference/universe/', { params: { query: { universe_name: 'GLOBAL', fields: ['NAME'], fields_extra: ['esg_score'] } } });
    assert.equal(reference(listed, '/data/reference/universe/').data[z!]!.esg_score, 8.2);

    const remove = (body: components['schemas']['CustomReferenceRemoveRequest']) => c.POST('/data/custom/reference/remove/', { body });
    assert.equal(shapes.ok('/data/custom/reference/remove/', 'post', await remove({ instrument_ids: [y!], keys: ['in_house_rating'] })).data.removed, 1);
    assert.equal(shapes.ok('/data/custom/reference/remove/', 'post', await remove({ instrument_ids: [y!], keys: ['in_house_rating'] })).data.removed, 0);
    assert.equal(shapes.ok('/data/custom/reference/remove/', 'post', await remove({ instrument_ids: [z!] })).data.removed, 3);
    const left = await c.POST('/data/custom/reference/query/', { body: {} });
    assert.deepEqual(Object.keys(shapes.ok('/data/custom/reference/query/', 'post', left).data).sort(), sorted([x!, y!]));

    assert.equal(shapes.ok('/data/custom/reference/clear/', 'post', await c.POST('/data/custom/reference/clear/', { body: {} })).data.removed, 6);
    assert.equal(shapes.ok('/data/custom/reference/clear/', 'post', await c.POST('/data/custom/reference/clear/')).data.removed, 0);
    assert.deepEqual(shapes.ok('/data/custom/reference/query/', 'post', await c.POST('/data/custom/reference/query/', { body: {} })), { data: {}, meta: null });
    const provider = await c.POST('/data/reference/query/', { body: { instrument_ids: [x!], fields: ['SECTOR'], fields_extra: [] } });
    assert.deepEqual(reference(provider).data[x!], { sector: global[x!]!.sector });
  });

  it('scores every universe with 1 to 5 stars or null per factor, quintiles over the normalization universe, under every group_split_type', async () => {
    const stars: Record<string, Stars> = {};
    for (const name of UNIVERSES) {
      stars[name] = await xray({ universe_name: name });
      assert.deepEqual(sorted(Object.keys(stars[name]!)), universes[name]);
      for (const scores of Object.values(stars[name]!)) {
        assert.deepEqual(Object.keys(scores), factors);
        for (const s of Object.values(scores)) assert.ok(s === null || (Number.isInteger(s) && s >= 1 && s <= 5), `stars ${s}`);
      }
    }
    for (const factor of factors) {
      const seen = new Set(
        Object.values(stars.GLOBAL!)
          .map((s) => s[factor])
          .filter((s) => s !== null),
      );
      assert.deepEqual([...seen].sort(), [1, 2, 3, 4, 5], `${factor}: every quintile over GLOBAL`);
    }
    // ROBO instruments ranked among GLOBAL score as they do in the GLOBAL answer.
    const roboInGlobal = await xray({ universe_name: 'GLOBAL', instrument_universe: 'ROBO', normalization_universe: 'GLOBAL' });
    assert.deepEqual(roboInGlobal, Object.fromEntries(universes.ROBO!.map((isin) => [isin, stars.GLOBAL![isin]!])));

    const splits = shapes.schema('GroupSplitType').enum as components['schemas']['GroupSplitType'][];
    assert.equal(splits.length, 7);
    for (const split of splits) {
      const grouped = await xray({ universe_name: 'GLOBAL', group_split_type: split });
      assert.deepEqual(sorted(Object.keys(grouped)), universes.GLOBAL, split);
    }
    const bySector = await xray({ universe_name: 'GLOBAL', group_split_type: 'SECTOR' });
    assert.notDeepEqual(bySector, stars.GLOBAL, 'ranking within sectors changes some stars');

    const unknownFactor = await client.GET('/xray/universe/', { params: { query: { universe_name: 'GLOBAL', fields: ['VALUE_STARS', 'LUCK_STARS'] } } });
    assert.deepEqual(shapes.problem('/xray/universe/', 'get', unknownFactor, 422, 'unknown_field').errors?.[0]?.loc, ['query', 'fields', 1]);
    const unknownUniverse = await client.GET('/xray/universe/', { params: { query: { universe_name: 'NOPE', fields: ['VALUE_STARS'] } } });
    shapes.problem('/xray/universe/', 'get', unknownUniverse, 404, 'not_found');
  });

  it('filters and sorts in smart search, echoing the request in the documented response shape', async () => {
    // `ascending` is left out on purpose (the contract defaults it to false); the generated type
    // marks it required because it has a default, hence the cast.
    const request = {
      query: { reference: '$DIVIDEND_YIELD >= 0.01', xray: '$VALUE_STARS >= 3', derived: '$ANALYST_UPWARD_POTENTIAL > 0.05' },
      sorting_variables: {
        xray: ['PROFITABILITY_STARS'],
        derived: ['ANALYST_UPWARD_POTENTIAL'],
        sorting_order: ['PROFITABILITY_STARS', 'ANALYST_UPWARD_POTENTIAL'],
      },
      xray_parameters: { normalization_universe: 'GLOBAL', instrument_universe: 'GLOBAL', group_split_type: 'SECTOR' as const },
    };
    const found = await search(request as SearchRequest);
    assert.deepEqual(found.query, request.query);
    assert.deepEqual(found.xray_parameters, request.xray_parameters);
    assert.deepEqual(found.sorting_variables, { reference: [], ...request.sorting_variables, ascending: false });
    assert.deepEqual(found.instruments_predefined, []);
    // The same answer computed here from the reference listing and the X-Ray scores of that scope.
    const stars = await xray({ universe_name: 'GLOBAL', group_split_type: 'SECTOR' });
    const upside = (isin: string) => {
      const { price, analyst_target_price: target } = global[isin]!;
      return price && target !== null && target !== undefined ? target / price - 1 : null;
    };
    const expected = universes
      .GLOBAL!.filter((isin) => (global[isin]!.dividend_yield ?? -1) >= 0.01 && (stars[isin]!.VALUE_STARS ?? 0) >= 3 && (upside(isin) ?? 0) > 0.05)
      .sort(searchOrder([(isin) => stars[isin]!.PROFITABILITY_STARS ?? null, upside], false));
    assert.ok(expected.length > 3, `a search that finds something (${expected.length})`);
    assert.deepEqual(
      found.instruments,
      expected.map((isin) => ({ isin, name: global[isin]!.name })),
    );

    const lowYieldFirst = await search({
      query: {},
      sorting_variables: { reference: ['DIVIDEND_YIELD'], sorting_order: ['DIVIDEND_YIELD'], ascending: true },
      group_split_type: 'REGION',
    });
    const byYield = [...universes.GLOBAL!].sort(searchOrder([(isin) => global[isin]!.dividend_yield ?? null], true));
    assert.ok(global[byYield.at(-1)!]!.dividend_yield === null, 'some instruments have no yield: they come last');
    assert.deepEqual(
      lowYieldFirst.instruments.map((i) => i.isin),
      byYield,
    );
    assert.equal(lowYieldFirst.sorting_variables.ascending, true);
    assert.equal(lowYieldFirst.xray_parameters.group_split_type, 'REGION', 'a top-level group_split_type is the effective one');
    const both = await search({ query: {}, xray_parameters: { group_split_type: 'SIZE' }, group_split_type: 'REGION' });
    assert.equal(both.xray_parameters.group_split_type, 'SIZE', 'the one inside xray_parameters wins');

    const or = await search({ query: { xray: '($VALUE_STARS == 5 | $GROWTH_STARS == 5) & $SIZE_STARS != 1' } });
    const union = await xray({ universe_name: 'GLOBAL' });
    const passes = (s: Record<string, number | null>) => (s.VALUE_STARS === 5 || s.GROWTH_STARS === 5) && s.SIZE_STARS !== null && s.SIZE_STARS !== 1;
    assert.deepEqual(
      or.instruments.map((i) => i.isin),
      universes.GLOBAL!.filter((isin) => passes(union[isin]!)),
    );

    const everything = await search({ query: {} });
    assert.deepEqual(
      everything.instruments.map((i) => i.isin),
      universes.GLOBAL,
      'no filter: the whole universe by ISIN',
    );
    assert.deepEqual(everything.query, { reference: null, xray: null, derived: null });
    assert.deepEqual(everything.xray_parameters, { normalization_universe: null, instrument_universe: null, group_split_type: null });
    assert.deepEqual(everything.sorting_variables, { reference: [], xray: [], derived: [], sorting_order: [], ascending: false });

    const unlisted = await client.POST('/smart-search/', {
      body: { query: {}, sorting_variables: { xray: ['VALUE_STARS'], sorting_order: ['GROWTH_STARS'], ascending: false } },
    });
    assert.deepEqual(shapes.problem('/smart-search/', 'post', unlisted, 422, 'validation_failed').errors?.[0]?.loc, [
      'body',
      'sorting_variables',
      'sorting_order',
      0,
    ]);
  });

  it('answers problem+json: 422 unknown_field for an unknown field, 400 invalid_filter with the position for a bad filter', async () => {
    const unknown = await client.POST('/data/reference/query/', { body: { instrument_ids: picks, fields: ['NAME', 'CURRENCY', 'YIELD'], fields_extra: [] } });
    const problem = shapes.problem('/data/reference/query/', 'post', unknown, 422, 'unknown_field');
    assert.deepEqual(problem.errors?.[0]?.loc, ['body', 'fields', 2]);
    for (const field of fields) assert.ok(problem.detail.includes(field), `the detail lists ${field}: ${problem.detail}`);
    const extra = await client.POST('/data/reference/query/', { body: { instrument_ids: picks, fields: [], fields_extra: ['never_uploaded'] } });
    assert.deepEqual(shapes.problem('/data/reference/query/', 'post', extra, 422, 'unknown_field').errors?.[0]?.loc, ['body', 'fields_extra', 0]);
    const unknownInFilter = await client.POST('/smart-search/', { body: { query: { xray: '$LUCK_STARS >= 4' } } });
    shapes.problem('/smart-search/', 'post', unknownInFilter, 422, 'unknown_field');

    const bad = await client.POST('/smart-search/', { body: { query: { xray: '$VALUE_STARS >= & $STABILITY_STARS >= 3' } } });
    const filter = shapes.problem('/smart-search/', 'post', bad, 400, 'invalid_filter');
    assert.match(filter.detail, /position 16\b/, filter.detail);
    assert.deepEqual(filter.errors?.[0]?.loc, ['body', 'query', 'xray']);
  });

  it('refuses what the contract refuses: 422 validation_failed in bodies and CSV rows, 415 for a CSV that is not text/csv, 404 for an unknown universe', async () => {
    const notIsin = await client.POST('/data/reference/query/', { body: { instrument_ids: [picks[0]!, 'not-an-isin'], fields: ['NAME'], fields_extra: [] } });
    assert.deepEqual(shapes.problem('/data/reference/query/', 'post', notIsin, 422, 'validation_failed').errors?.[0]?.loc, ['body', 'instrument_ids', 1]);
    const c = await newClient();
    const csvPath = '/data/custom/reference/csv/';
    const badRow = await c.POST(csvPath, {
      body: `instrument_id,esg_score\n${picks[0]},1\nnot-an-isin,2\n`,
      bodySerializer: (b: string) => b,
      headers: { 'content-type': 'text/csv' },
    });
    assert.deepEqual(shapes.problem(csvPath, 'post', badRow, 422, 'validation_failed').errors?.[0]?.loc, ['body', 3, 'instrument_id']);
    const badHeader = await c.POST(csvPath, {
      body: `isin,esg_score\n${picks[0]},1\n`,
      bodySerializer: (b: string) => b,
      headers: { 'content-type': 'text/csv' },
    });
    assert.deepEqual(shapes.problem(csvPath, 'post', badHeader, 422, 'validation_failed').errors?.[0]?.loc, ['body', 1, 'isin']);
    shapes.problem(csvPath, 'post', await c.POST(csvPath, { body: `instrument_id,esg_score\n${picks[0]},1\n` }), 415, 'unsupported_media_type');
    assert.deepEqual(
      shapes.ok('/data/custom/reference/query/', 'post', await c.POST('/data/custom/reference/query/', { body: {} })).data,
      {},
      'nothing of a refused upload is stored',
    );

    const unknownScope = await client.POST('/smart-search/', { body: { query: {}, xray_parameters: { instrument_universe: 'NOPE' } } });
    shapes.problem('/smart-search/', 'post', unknownScope, 404, 'not_found');
  });

  it('answers a query parameter the contract refuses with a 400 invalid_parameter', async () => {
    const problem = shapes.schema('Problem');
    const split = await client.GET('/xray/universe/', {
      params: { query: { universe_name: 'GLOBAL', fields: ['VALUE_STARS'], group_split_type: 'CONTINENT' as 'REGION' } },
    });
    assert.equal(split.response.status, 400);
    shapes.assertSchema(problem, split.error);
    assert.equal((split.error as { code: string }).code, 'invalid_parameter');
    assert.deepEqual((split.error as { errors: { loc: unknown[] }[] }).errors[0]!.loc, ['query', 'group_split_type']);
    const name = await client.GET('/data/reference/universe/', { params: { query: { universe_name: 'no spaces allowed', fields: ['NAME'] } } });
    assert.equal(name.response.status, 400);
    shapes.assertSchema(problem, name.error);
    assert.equal((name.error as { code: string }).code, 'invalid_parameter');
  });

  it('documents the 400 invalid_parameter of query parameters on every operation that takes them', async () => {
    const split = await client.GET('/xray/universe/', {
      params: { query: { universe_name: 'GLOBAL', fields: ['VALUE_STARS'], group_split_type: 'CONTINENT' as 'REGION' } },
    });
    shapes.problem('/xray/universe/', 'get', split, 400, 'invalid_parameter');
    const name = await client.GET('/data/reference/universe/', { params: { query: { universe_name: 'no spaces allowed', fields: ['NAME'] } } });
    shapes.problem('/data/reference/universe/', 'get', name, 400, 'invalid_parameter');
    const id = await client.GET('/inspiration/', { params: { query: { id: ['Not-An-Id'] } } });
    shapes.problem('/inspiration/', 'get', id, 400, 'invalid_parameter');
  });

  it('replays a custom-data write sent again with the same Idempotency-Key, and refuses the key with another body', async () => {
    const c = await newClient();
    const path = '/data/custom/reference/batch/';
    const body = { data: [{ instrument_id: picks[0]!, reference_data: { esg_score: 5 } }] };
    const header = { 'Idempotency-Key': 'upload-1' };
    const first = await c.POST(path, { params: { header }, body });
    assert.equal(shapes.ok(path, 'post', first).data.upserted, 1);
    assert.equal(first.response.headers.get('idempotency-replayed'), null);
    const again = await c.POST(path, { params: { header }, body });
    assert.deepEqual(shapes.ok(path, 'post', again), first.data);
    assert.equal(again.response.headers.get('idempotency-replayed'), 'true');
    const other = await c.POST(path, { params: { header }, body: { data: [{ instrument_id: picks[0]!, reference_data: { esg_score: 6 } }] } });
    shapes.problem(path, 'post', other, 422, 'idempotency_key_reused');
  });

  it('lists inspirations with their instruments, and puts, lists and deletes a custom definition', async () => {
    const c = await newClient();
    const definitions = shapes.ok('/inspiration/definition/', 'get', await c.GET('/inspiration/definition/'));
    const ids = definitions.map((d) => d.id);
    assert.ok(ids.length > 0 && definitions.every((d) => !d.custom));
    assert.deepEqual(ids, sorted(ids));
    const all = shapes.ok('/inspiration/', 'get', await c.GET('/inspiration/'));
    assert.deepEqual(
      all.map(({ instruments, ...definition }) => definition),
      definitions,
    );
    for (const inspiration of all) {
      // Without xray_parameters smart search ranks over the same default scope: all the tenant's universes.
      const same = await search({ query: { xray: inspiration.query.xray } }, c);
      assert.deepEqual(inspiration.instruments, same.instruments, inspiration.id);
    }
    assert.ok(all.some((i) => i.instruments.length > 0));
    const two = shapes.ok('/inspiration/', 'get', await c.GET('/inspiration/', { params: { query: { id: [ids[1]!, ids[0]!] } } }));
    assert.deepEqual(
      two.map((i) => i.id),
      ids.slice(0, 2),
    );

    const path = { inspiration_id: 'house_value_picks' };
    const input = {
      name: 'House value picks',
      description: 'Undervalued, profitable companies.',
      type: 'inspiration' as const,
      query: { xray: '$VALUE_STARS >= 4 & $PROFITABILITY_STARS >= 3' },
    };
    const created = await c.PUT('/inspiration/definition/{inspiration_id}', { params: { path }, body: input });
    assert.deepEqual(shapes.ok('/inspiration/definition/{inspiration_id}', 'put', created, 201), { id: path.inspiration_id, custom: true, ...input });
    assert.equal(created.response.headers.get('location'), '/inspiration/definition/house_value_picks');
    const replaced = await c.PUT('/inspiration/definition/{inspiration_id}', { params: { path }, body: { ...input, name: 'House picks' } });
    assert.equal(shapes.ok('/inspiration/definition/{inspiration_id}', 'put', replaced, 200).name, 'House picks');

    const listed = shapes.ok('/inspiration/definition/', 'get', await c.GET('/inspiration/definition/'));
    assert.deepEqual(
      listed.map((d) => d.id),
      sorted([...ids, path.inspiration_id]),
    );
    assert.equal(listed.find((d) => d.id === path.inspiration_id)!.custom, true);
    const own = shapes.ok('/inspiration/', 'get', await c.GET('/inspiration/', { params: { query: { id: [path.inspiration_id] } } }));
    assert.equal(own.length, 1);
    assert.deepEqual(own[0]!.instruments, (await search({ query: { xray: input.query.xray } }, c)).instruments);
    assert.ok(own[0]!.instruments.length > 0);

    const putPath = '/inspiration/definition/{inspiration_id}';
    shapes.problem(putPath, 'put', await c.PUT(putPath, { params: { path: { inspiration_id: ids[0]! } }, body: input }), 409, 'state_conflict');
    shapes.problem(putPath, 'delete', await c.DELETE(putPath, { params: { path: { inspiration_id: ids[0]! } } }), 409, 'state_conflict');
    shapes.problem(putPath, 'put', await c.PUT(putPath, { params: { path }, body: { ...input, query: { xray: '$VALUE_STARS >=' } } }), 400, 'invalid_filter');
    shapes.problem(putPath, 'put', await c.PUT(putPath, { params: { path }, body: { ...input, query: { xray: '$LUCK_STARS >= 4' } } }), 422, 'unknown_field');

    const deleted = await c.DELETE(putPath, { params: { path } });
    assert.equal(deleted.response.status, 204);
    shapes.problem(putPath, 'delete', await c.DELETE(putPath, { params: { path } }), 404, 'not_found');
    const gone = shapes.problem(
      '/inspiration/',
      'get',
      await c.GET('/inspiration/', { params: { query: { id: [ids[0]!, path.inspiration_id] } } }),
      404,
      'not_found',
    );
    assert.match(gone.detail, /house_value_picks/, 'the 404 names the id');
    assert.deepEqual(shapes.ok('/inspiration/definition/', 'get', await c.GET('/inspiration/definition/')), definitions);
  });

  it("simulates future performance: the contract's example answers in the documented shape, reproducibly; a bad request is a 422 with its loc", async () => {
    const path = '/performance/future/';
    type Request = components['schemas']['FuturePerformanceRequest'];
    const operation = (shapes.contract.paths?.[path] as { post: { requestBody: { content: Record<string, { example: Request }> } } }).post;
    const example = operation.requestBody.content['application/json']!.example;
    const body = { ...example, scenarios: 1000 };
    const answer = shapes.ok(path, 'post', await client.POST(path, { body }));
    const dates = ['2025-01-01', '2026-01-01', '2027-01-01'];
    assert.deepEqual(answer.data.deposits.deposits, { '2025-01-01': 1050, '2026-01-01': 1650, '2027-01-01': 2250 }, 'the cumulative deposits of the example');
    for (const q of ['0.05', '0.5', '0.95']) {
      assert.deepEqual(Object.keys(answer.data.value[q]!), dates);
      assert.equal(answer.data.value[q]!['2025-01-01'], 1050);
      assert.equal(answer.data.return[q]!['2025-01-01'], 0);
    }
    assert.ok(answer.data.value['0.05']!['2027-01-01']! < answer.data.value['0.95']!['2027-01-01']!);
    assert.deepEqual(shapes.ok(path, 'post', await client.POST(path, { body })), answer, 'the same seed gives the same answer');
    const late = await client.POST(path, { body: { ...body, end_date: '2024-12-31' } });
    assert.deepEqual(shapes.problem(path, 'post', late, 422, 'validation_failed').errors?.[0]?.loc, ['body', 'end_date']);
  });

  it("keeps each tenant's custom values and definitions to itself", async () => {
    const [a, b] = [await platform.tenant(), await platform.tenant()];
    const asA = dataClient(platform.dataUrl, a.tenantId, a.apiKey);
    const asB = dataClient(platform.dataUrl, b.tenantId, b.apiKey);
    const isin = picks[0]!;
    const esg = (c: Client) => c.POST('/data/reference/query/', { body: { instrument_ids: [isin], fields: [], fields_extra: ['esg_score'] } });

    await asA.POST('/data/custom/reference/batch/', { body: { data: [{ instrument_id: isin, reference_data: { esg_score: 1, currency: 'XXX' } }] } });
    const body = { name: 'Only A', description: 'Custom to tenant A.', type: 'theme' as const, query: { xray: '$GROWTH_STARS >= 4' } };
    const put = await asA.PUT('/inspiration/definition/{inspiration_id}', { params: { path: { inspiration_id: 'only_a' } }, body });
    assert.equal(put.response.status, 201);

    assert.deepEqual(shapes.ok('/data/custom/reference/query/', 'post', await asB.POST('/data/custom/reference/query/', { body: {} })).data, {});
    shapes.problem('/data/reference/query/', 'post', await esg(asB), 422, 'unknown_field');
    const currency = await asB.POST('/data/reference/query/', { body: { instrument_ids: [isin], fields: ['CURRENCY'], fields_extra: [] } });
    assert.equal(reference(currency).data[isin]!.currency, global[isin]!.currency, "A's override is not B's");

    await asB.POST('/data/custom/reference/batch/', { body: { data: [{ instrument_id: isin, reference_data: { esg_score: 9 } }] } });
    assert.equal(reference(await esg(asA)).data[isin]!.esg_score, 1);
    assert.equal(reference(await esg(asB)).data[isin]!.esg_score, 9);
    assert.equal(shapes.ok('/data/custom/reference/clear/', 'post', await asB.POST('/data/custom/reference/clear/', { body: {} })).data.removed, 1);
    assert.equal(reference(await esg(asA)).data[isin]!.esg_score, 1, "B's clear leaves A's values");

    const ofB = shapes.ok('/inspiration/definition/', 'get', await asB.GET('/inspiration/definition/'));
    assert.ok(!ofB.some((d) => d.id === 'only_a' || d.custom));
    shapes.problem('/inspiration/', 'get', await asB.GET('/inspiration/', { params: { query: { id: ['only_a'] } } }), 404, 'not_found');
    shapes.problem(
      '/inspiration/definition/{inspiration_id}',
      'delete',
      await asB.DELETE('/inspiration/definition/{inspiration_id}', { params: { path: { inspiration_id: 'only_a' } } }),
      404,
      'not_found',
    );
    const ofA = shapes.ok('/inspiration/definition/', 'get', await asA.GET('/inspiration/definition/'));
    assert.deepEqual(
      ofA.find((d) => d.id === 'only_a'),
      { id: 'only_a', custom: true, ...body },
    );

    const crossed = await dataClient(platform.dataUrl, b.tenantId, a.apiKey).POST('/data/custom/reference/query/', { body: {} });
    shapes.problem('/data/custom/reference/query/', 'post', crossed, 403, 'forbidden');
    const unknownKey = await dataClient(platform.dataUrl, b.tenantId, 'not-a-key').POST('/data/custom/reference/query/', { body: {} });
    shapes.problem('/data/custom/reference/query/', 'post', unknownKey, 401, 'unauthenticated');
  });
});
