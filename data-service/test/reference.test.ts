import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { REFERENCE_FIELDS } from '../src/domain/reference-fields.ts';
import { dataClient } from './support/data-client.ts';
import { KNOWN, TENANT_A, TENANT_B, UNKNOWN_TO_PROVIDER, buildFixture } from './support/reference-fixture.ts';
import { seedTenantUniverses } from './support/tenant-data.ts';

const ALL_FIELDS = REFERENCE_FIELDS.map((f) => f.name);
const QUERY = '/data/reference/query/';
const UNIVERSE = '/data/reference/universe/';

describe('reference data', () => {
  let platform: TestPlatform;
  let a: ReturnType<typeof dataClient>;
  let b: ReturnType<typeof dataClient>;

  before(async () => {
    const fixture = await buildFixture(KNOWN);
    platform = await startTestPlatform(fixture.env);
    a = dataClient(platform.dataUrl, await platform.tenant(TENANT_A));
    b = dataClient(platform.dataUrl, await platform.tenant(TENANT_B));
    await seedTenantUniverses(platform.database, KNOWN.tenantUniverses ?? []);
  });
  after(() => platform?.stop());

  describe('POST /data/reference/query/', () => {
    it('answers every field under its lower-case name, typed: numbers, YYYY-MM-DD dates, nulls', async () => {
      const res = await a.post(QUERY, { instrument_ids: ['IE00B4L5Y983', 'DE0005140008'], fields: ALL_FIELDS, fields_extra: [] });
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(res.body, {
        data: {
          IE00B4L5Y983: {
            isin: 'IE00B4L5Y983',
            name: 'iShares Core MSCI World UCITS ETF USD (Acc)',
            ticker: 'SWDA',
            asset_class: 'EQUITY',
            asset_subclass: 'GLOBAL_EQUITY',
            instrument_type: 'ETF',
            currency: 'USD',
            country: 'IE',
            region: 'GLOBAL',
            sector: 'DIVERSIFIED',
            exchange: 'XLON',
            market_cap: 95_000_000_000,
            size_label: 'LARGE',
            price: 98.42,
            price_date: '2025-03-14',
            dividend_yield: null,
            ter: 0.002,
            analyst_target_price: 101.5,
          },
          DE0005140008: {
            isin: 'DE0005140008',
            name: 'Deutsche Bank AG',
            ticker: null,
            asset_class: null,
            asset_subclass: null,
            instrument_type: null,
            currency: null,
            country: null,
            region: null,
            sector: null,
            exchange: null,
            market_cap: null,
            size_label: null,
            price: null,
            price_date: null,
            dividend_yield: null,
            ter: null,
            analyst_target_price: null,
          },
        },
        meta: null,
      });
    });

    it('keeps decimal prices exact to their six places and dates before 1970', async () => {
      const res = await a.post(QUERY, {
        instrument_ids: ['US0378331005', 'FR0000130809', 'NL0010273215'],
        fields: ['ANALYST_TARGET_PRICE', 'PRICE', 'PRICE_DATE'],
        fields_extra: [],
      });
      assert.deepEqual(res.body.data, {
        US0378331005: { analyst_target_price: 245.123456, price: 213.49, price_date: '2025-03-14' },
        FR0000130809: { analyst_target_price: 30, price: 0.000001, price_date: '2025-01-02' },
        NL0010273215: { analyst_target_price: null, price: 612.3, price_date: '1969-12-31' },
      });
    });

    it('answers only the requested fields, each once, in request order', async () => {
      const res = await a.post(QUERY, { instrument_ids: ['US0378331005'], fields: ['CURRENCY', 'NAME', 'CURRENCY'], fields_extra: [] });
      assert.deepEqual(Object.keys(res.body.data.US0378331005), ['currency', 'name']);
    });

    it('leaves out unknown instruments, answers a repeated one once, and follows the request order', async () => {
      const res = await a.post(QUERY, {
        instrument_ids: ['US5949181045', 'XS1234567890', 'US0378331005', 'US5949181045', UNKNOWN_TO_PROVIDER],
        fields: ['NAME'],
        fields_extra: [],
      });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body.data), ['US5949181045', 'US0378331005']);
    });

    it('answers an empty record per known instrument when no field is asked for', async () => {
      const res = await a.post(QUERY, { instrument_ids: ['US0378331005', 'DE0005140008'], fields: [], fields_extra: [] });
      assert.deepEqual(res.body, { data: { US0378331005: {}, DE0005140008: {} }, meta: null });
    });

    it('answers an empty data object when no instrument is known', async () => {
      const res = await a.post(QUERY, { instrument_ids: ['XS1234567890'], fields: ['NAME'], fields_extra: [] });
      assert.deepEqual(res.body, { data: {}, meta: null });
    });

    it('refuses an unknown field with 422 unknown_field at its position, listing the allowed ones', async () => {
      const res = await a.post(QUERY, { instrument_ids: ['US0378331005'], fields: ['NAME', 'YIELD'], fields_extra: [] });
      assertProblem(res, 422, 'unknown_field');
      assert.deepEqual(res.body.errors[0].loc, ['body', 'fields', 1]);
      assert.match(res.body.detail, /'YIELD'/);
      for (const name of ALL_FIELDS) assert.ok(res.body.detail.includes(name), `${name} missing from: ${res.body.detail}`);
    });

    it('refuses a field that breaks the contract pattern as validation_failed', async () => {
      const res = await a.post(QUERY, { instrument_ids: ['US0378331005'], fields: ['name'], fields_extra: [] });
      assertProblem(res, 422, 'validation_failed');
    });

    it('refuses a fields_extra key the tenant never uploaded with 422 unknown_field', async () => {
      const res = await b.post(QUERY, { instrument_ids: ['US0378331005'], fields: [], fields_extra: ['never_uploaded'] });
      assertProblem(res, 422, 'unknown_field');
      assert.deepEqual(res.body.errors[0].loc, ['body', 'fields_extra', 0]);
    });

    it('answers an Arrow stream with the Content-Type asked for, and 406 when nothing offered is acceptable', async () => {
      const body = { instrument_ids: ['US0378331005'], fields: ['NAME'], fields_extra: [] };
      for (const accept of ['application/vnd.apache.arrow.stream', 'application/octet-stream', 'application/json;q=0.5, application/octet-stream']) {
        const res = await a.bytes(QUERY, accept, body);
        assert.equal(res.status, 200);
        const expected = accept.includes('vnd.apache') ? 'application/vnd.apache.arrow.stream' : 'application/octet-stream';
        assert.equal(res.contentType, expected, accept);
      }
      for (const accept of ['*/*', 'application/json', 'application/*']) {
        const res = await a.bytes(QUERY, accept, body);
        assert.match(res.contentType ?? '', /^application\/json/, accept);
      }
      assertProblem(await a.post(QUERY, body, { accept: 'text/csv' }), 406, 'not_acceptable');
    });
  });

  describe('custom values in reference answers', () => {
    before(async () => {
      const up = await a.post('/data/custom/reference/batch/', {
        data: [
          { instrument_id: 'US0378331005', reference_data: { esg_score: 6.1, in_house_rating: 'A', price: 1.25, name: 'Apple (house name)' } },
          { instrument_id: 'IE00B4L5Y983', reference_data: { esg_score: 7.4, price_date: '2020-02-29', ter: null } },
          { instrument_id: 'DE0005140008', reference_data: { restricted: true } },
        ],
      });
      assert.equal(up.status, 200, up.text);
      const other = await b.post('/data/custom/reference/batch/', { data: [{ instrument_id: 'US0378331005', reference_data: { esg_score: 1 } }] });
      assert.equal(other.status, 200, other.text);
    });

    it('answers fields_extra keys, null for instruments without a value', async () => {
      const res = await a.post(QUERY, {
        instrument_ids: ['US0378331005', 'IE00B4L5Y983', 'NL0010273215'],
        fields: ['CURRENCY'],
        fields_extra: ['esg_score', 'in_house_rating'],
      });
      assert.deepEqual(res.body.data, {
        US0378331005: { currency: 'USD', esg_score: 6.1, in_house_rating: 'A' },
        IE00B4L5Y983: { currency: 'USD', esg_score: 7.4, in_house_rating: null },
        NL0010273215: { currency: 'EUR', esg_score: null, in_house_rating: null },
      });
    });

    it("lets the tenant's value win over the provider's for the field of the same lower-case name", async () => {
      const res = await a.post(QUERY, {
        instrument_ids: ['US0378331005', 'IE00B4L5Y983', 'NL0010273215'],
        fields: ['NAME', 'PRICE', 'PRICE_DATE', 'TER'],
        fields_extra: [],
      });
      assert.deepEqual(res.body.data, {
        US0378331005: { name: 'Apple (house name)', price: 1.25, price_date: '2025-03-14', ter: null },
        // An explicit null overrides too.
        IE00B4L5Y983: { name: 'iShares Core MSCI World UCITS ETF USD (Acc)', price: 98.42, price_date: '2020-02-29', ter: null },
        NL0010273215: { name: 'ASML', price: 612.3, price_date: '1969-12-31', ter: null },
      });
      const both = await a.post(QUERY, { instrument_ids: ['US0378331005'], fields: ['PRICE'], fields_extra: ['price'] });
      assert.deepEqual(both.body.data, { US0378331005: { price: 1.25 } });
    });

    it("never shows tenant A's values to tenant B", async () => {
      const res = await b.post(QUERY, { instrument_ids: ['US0378331005'], fields: ['NAME', 'PRICE'], fields_extra: ['esg_score'] });
      assert.deepEqual(res.body.data, { US0378331005: { name: 'Apple Inc.', price: 213.49, esg_score: 1 } });
      assertProblem(await b.post(QUERY, { instrument_ids: ['US0378331005'], fields: [], fields_extra: ['in_house_rating'] }), 422, 'unknown_field');
    });
  });

  describe('GET /data/reference/universe/', () => {
    const names = (res: { body: { data: Record<string, unknown> } }) => Object.keys(res.body.data);

    it('answers every known instrument of a built-in universe, by ISIN, with a single fields parameter', async () => {
      const res = await a.get(`${UNIVERSE}?universe_name=ROBO&fields=NAME`);
      assert.equal(res.status, 200, res.text);
      const timing = /^answer;dur=(\d+\.\d), query;dur=(\d+\.\d)$/.exec(res.headers.get('server-timing') ?? '');
      assert.ok(timing, `the time the answer took: ${res.headers.get('server-timing')}`);
      assert.ok(Number(timing[2]) <= Number(timing[1]), 'waiting for DuckDB is part of it');
      assert.deepEqual(res.body, {
        data: { IE00B4L5Y983: { name: 'iShares Core MSCI World UCITS ETF USD (Acc)' }, US0378331005: { name: 'Apple (house name)' } },
        meta: null,
      });
    });

    it("answers the tenant's own universe, leaving out instruments the provider does not know", async () => {
      const res = await a.get(`${UNIVERSE}?universe_name=HOUSE&fields=NAME&fields=PRICE&fields_extra=esg_score`);
      assert.deepEqual(res.body.data, {
        NL0010273215: { name: 'ASML', price: 612.3, esg_score: null },
        US5949181045: { name: 'Microsoft Corporation', price: 380, esg_score: null },
      });
    });

    it("without a name answers the union of the built-in universes and the tenant's own", async () => {
      assert.deepEqual(names(await a.get(`${UNIVERSE}?fields=ISIN`)), [
        'DE0005140008',
        'FR0000130809',
        'IE00B4L5Y983',
        'NL0010273215',
        'US0378331005',
        'US5949181045',
      ]);
      assert.deepEqual(names(await b.get(`${UNIVERSE}?fields=ISIN`)), ['DE0005140008', 'FR0000130809', 'IE00B4L5Y983', 'NL0010273215', 'US0378331005']);
    });

    it("answers 404 for an unknown universe and for another tenant's universe", async () => {
      assertProblem(await a.get(`${UNIVERSE}?universe_name=ROBO2&fields=NAME`), 404, 'not_found');
      assertProblem(await b.get(`${UNIVERSE}?universe_name=HOUSE&fields=NAME`), 404, 'not_found');
    });

    it('refuses unknown fields and custom keys at their query position', async () => {
      const res = await a.get(`${UNIVERSE}?universe_name=ROBO&fields=NAME&fields=YIELD`);
      assertProblem(res, 422, 'unknown_field');
      assert.deepEqual(res.body.errors[0].loc, ['query', 'fields', 1]);
      const extra = await b.get(`${UNIVERSE}?universe_name=ROBO&fields=NAME&fields_extra=in_house_rating`);
      assertProblem(extra, 422, 'unknown_field');
      assert.deepEqual(extra.body.errors[0].loc, ['query', 'fields_extra', 0]);
    });
  });
});
