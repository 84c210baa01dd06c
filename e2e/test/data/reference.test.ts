import assert from 'node:assert/strict';
import { tableFromIPC } from 'apache-arrow';
import type { components } from '@platform/api-types/data';
import { dataClient } from '../../src/clients.ts';
import { ARROW_TYPES, UNIVERSES, UNKNOWN_ISIN, jsonOf, sorted, openSampleData, type Client, type SampleData } from './sample-data.ts';

describe('data interface through the generated client: reference data and custom values', function () {
  this.timeout(60_000);
  // Set once the platform has started (before); `{} as SampleData` only gives them their types.
  let { platform, shapes, client, fields, global, universes, picks, newClient, reference } = {} as SampleData;

  before(async () => {
    ({ platform, shapes, client, fields, global, universes, picks, newClient, reference } = await openSampleData());
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
