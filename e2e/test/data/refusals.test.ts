import assert from 'node:assert/strict';
import { openSampleData, type SampleData } from './sample-data.ts';

describe('data interface through the generated client: what it refuses', function () {
  this.timeout(60_000);
  // Set once the platform has started (before); `{} as SampleData` only gives them their types.
  let { platform, shapes, client, fields, picks, newClient } = {} as SampleData;

  before(async () => {
    ({ platform, shapes, client, fields, picks, newClient } = await openSampleData());
  });
  after(() => platform?.stop());

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
});
