import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { csvCellValue, parseCustomReferenceCsv } from '../src/custom/csv.ts';
import { dataClient } from './support/data-client.ts';
import { KNOWN, TENANT_A, TENANT_B, buildFixture } from './support/reference-fixture.ts';

const BATCH = '/data/custom/reference/batch/';
const CSV = '/data/custom/reference/csv/';
const QUERY = '/data/custom/reference/query/';
const REMOVE = '/data/custom/reference/remove/';
const CLEAR = '/data/custom/reference/clear/';

describe('custom reference CSV parsing', () => {
  it('types cells as the contract says: JSON numbers, true/false, empty skipped, anything else text', () => {
    assert.equal(csvCellValue('7.4'), 7.4);
    assert.equal(csvCellValue('-0.5e3'), -500);
    assert.equal(csvCellValue('true'), true);
    assert.equal(csvCellValue('false'), false);
    assert.equal(csvCellValue(''), undefined);
    for (const text of ['007', '1.', '.5', '+1', 'TRUE', 'NaN', 'Infinity', '1e999', ' 1', 'A']) assert.equal(csvCellValue(text), text, text);
  });

  it('reads quoted cells with commas, quotes and line breaks, CRLF and a BOM', () => {
    const text = '\uFEFFinstrument_id,note,score\r\nUS0378331005,"a, b ""quoted""\nsecond line",1\r\nIE00B4L5Y983,,2\r\n';
    assert.deepEqual(parseCustomReferenceCsv(text), {
      keys: ['note', 'score'],
      rows: [
        {
          row: 2,
          isin: 'US0378331005',
          values: [
            ['note', 'a, b "quoted"\nsecond line'],
            ['score', 1],
          ],
        },
        { row: 3, isin: 'IE00B4L5Y983', values: [['score', 2]] },
      ],
    });
  });
});

describe('custom reference data', () => {
  let platform: TestPlatform;
  let a: ReturnType<typeof dataClient>;
  let b: ReturnType<typeof dataClient>;

  before(async () => {
    platform = await startTestPlatform((await buildFixture(KNOWN)).env);
    a = dataClient(platform.dataUrl, await platform.tenant(TENANT_A));
    b = dataClient(platform.dataUrl, await platform.tenant(TENANT_B));
  });
  after(() => platform?.stop());
  beforeEach(async () => {
    for (const t of [a, b]) assert.equal((await t.post(CLEAR, {})).status, 200);
  });

  const everything = async (t: typeof a) => {
    const res = await t.post(QUERY, {});
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };

  it('upserts a batch, merging keys, later entries winning, null stored as a value', async () => {
    const first = await a.post(BATCH, {
      data: [
        { instrument_id: 'US0378331005', reference_data: { esg_score: 6.1, in_house_rating: 'B', restricted: false } },
        { instrument_id: 'XS1234567890', reference_data: { esg_score: 3 } },
      ],
    });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body, { data: { upserted: 4 }, meta: null });
    const second = await a.post(BATCH, {
      data: [
        { instrument_id: 'US0378331005', reference_data: { in_house_rating: 'C' } },
        { instrument_id: 'US0378331005', reference_data: { in_house_rating: null, note: 'x' } },
      ],
    });
    assert.deepEqual(second.body.data, { upserted: 2 });
    assert.deepEqual(await everything(a), {
      US0378331005: { esg_score: 6.1, in_house_rating: null, note: 'x', restricted: false },
      XS1234567890: { esg_score: 3 },
    });
  });

  it('uploads CSV with the same effect, typing cells and skipping empty ones', async () => {
    const csv = 'instrument_id,esg_score,in_house_rating,restricted\nIE00B4L5Y983,7.4,A,false\nUS0378331005,6.1,,true\nDE0005140008,"1,5","say ""hi""",\n';
    const res = await a.postText(CSV, csv, 'text/csv');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { data: { upserted: 7 }, meta: null });
    assert.deepEqual(await everything(a), {
      DE0005140008: { esg_score: '1,5', in_house_rating: 'say "hi"' },
      IE00B4L5Y983: { esg_score: 7.4, in_house_rating: 'A', restricted: false },
      US0378331005: { esg_score: 6.1, restricted: true },
    });
  });

  it('refuses a bad CSV header, ISIN or row length with 422 validation_failed at [body, row, column]', async () => {
    const cases: [string, (string | number)[]][] = [
      ['isin,esg_score\nUS0378331005,1\n', ['body', 1, 'isin']],
      ['instrument_id,esg score\nUS0378331005,1\n', ['body', 1, 'esg score']],
      ['instrument_id,a,a\nUS0378331005,1,2\n', ['body', 1, 'a']],
      ['instrument_id,esg_score\nUS0378331005,1\nus0378331005,2\n', ['body', 3, 'instrument_id']],
      ['instrument_id,esg_score,rating\nUS0378331005,1\n', ['body', 2, 'rating']],
      ['instrument_id,esg_score\nUS0378331005,1,2\n', ['body', 2, 'column 3']],
      ['instrument_id,price\nUS0378331005,cheap\n', ['body', 2, 'price']],
      ['instrument_id,note\nUS0378331005,"open\n', ['body', 2]],
    ];
    for (const [csv, loc] of cases) {
      const res = await a.postText(CSV, csv, 'text/csv');
      assertProblem(res, 422, 'validation_failed');
      assert.deepEqual(res.body.errors[0].loc, loc, csv);
    }
    assert.deepEqual(await everything(a), {}, 'a refused upload writes nothing');
  });

  it('refuses a CSV body sent as something else than text/csv with 415', async () => {
    assertProblem(await a.postText(CSV, 'instrument_id,a\nUS0378331005,1\n', 'text/plain'), 415, 'unsupported_media_type');
  });

  it('refuses a value that cannot override its reference field, and a body against the contract', async () => {
    const wrong = await a.post(BATCH, {
      data: [
        { instrument_id: 'US0378331005', reference_data: { esg: 1 } },
        { instrument_id: 'US0378331005', reference_data: { price_date: '2025-02-30' } },
      ],
    });
    assertProblem(wrong, 422, 'validation_failed');
    assert.deepEqual(wrong.body.errors[0].loc, ['body', 'data', 1, 'reference_data', 'price_date']);
    assertProblem(await a.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { price: 'cheap' } }] }), 422, 'validation_failed');
    const badIsin = await a.post(BATCH, { data: [{ instrument_id: 'US037833100', reference_data: { esg: 1 } }] });
    assertProblem(badIsin, 422, 'validation_failed');
    assert.deepEqual(badIsin.body.errors[0].loc, ['body', 'data', 0, 'instrument_id']);
    assertProblem(await a.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { '1bad': 1 } }] }), 422, 'validation_failed');
    assertProblem(await a.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { nested: { a: 1 } } }] }), 422, 'validation_failed');
    // Text fields take any value, read back as its text.
    assert.equal(
      (await a.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { ticker: 123, price: 2, price_date: '2024-02-29' } }] })).status,
      200,
    );
  });

  it('queries by instrument and key; only instruments with a selected value appear; an unknown key is 422 unknown_field', async () => {
    await a.post(BATCH, {
      data: [
        { instrument_id: 'US0378331005', reference_data: { esg_score: 6.1, note: 'n' } },
        { instrument_id: 'IE00B4L5Y983', reference_data: { note: 'm' } },
        { instrument_id: 'DE0005140008', reference_data: { esg_score: 2 } },
      ],
    });
    const res = await a.post(QUERY, { instrument_ids: ['US0378331005', 'IE00B4L5Y983', 'NL0010273215'], keys: ['esg_score'] });
    assert.deepEqual(res.body, { data: { US0378331005: { esg_score: 6.1 } }, meta: null });
    assert.deepEqual((await a.post(QUERY, { keys: ['note'] })).body.data, { IE00B4L5Y983: { note: 'm' }, US0378331005: { note: 'n' } });
    const unknown = await a.post(QUERY, { keys: ['note', 'nope'] });
    assertProblem(unknown, 422, 'unknown_field');
    assert.deepEqual(unknown.body.errors[0].loc, ['body', 'keys', 1]);
    assert.match(unknown.body.detail, /esg_score, note/);
  });

  it('removes given keys or all keys of given instruments, idempotently, counting what went', async () => {
    await a.post(BATCH, {
      data: [
        { instrument_id: 'US0378331005', reference_data: { esg_score: 6.1, note: 'n', rating: 'A' } },
        { instrument_id: 'IE00B4L5Y983', reference_data: { note: 'm', rating: 'B' } },
      ],
    });
    assert.deepEqual((await a.post(REMOVE, { instrument_ids: ['US0378331005', 'NL0010273215'], keys: ['note', 'unknown_key'] })).body, {
      data: { removed: 1 },
      meta: null,
    });
    assert.deepEqual((await a.post(REMOVE, { instrument_ids: ['US0378331005'], keys: ['note'] })).body.data, { removed: 0 });
    assert.deepEqual((await a.post(REMOVE, { instrument_ids: ['IE00B4L5Y983'] })).body.data, { removed: 2 });
    assert.deepEqual(await everything(a), { US0378331005: { esg_score: 6.1, rating: 'A' } });
  });

  it('clears every value of the tenant, with or without a body', async () => {
    await a.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { a1: 1, a2: 2 } }] });
    const res = await a.post(CLEAR, undefined);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { data: { removed: 2 }, meta: null });
    assertProblem(await a.post(CLEAR, { everything: true }), 422, 'validation_failed');
  });

  it('takes concurrent writes of the same values without a conflict', async () => {
    const writes = Array.from({ length: 30 }, (_, i) =>
      i % 5 === 4
        ? a.post(REMOVE, { instrument_ids: ['US0378331005'], keys: ['b'] })
        : i % 2 === 0
          ? a.post(BATCH, {
              data: [
                { instrument_id: 'US0378331005', reference_data: { a: i, b: i } },
                { instrument_id: 'IE00B4L5Y983', reference_data: { a: i } },
              ],
            })
          : a.postText(CSV, `instrument_id,a,b\nUS0378331005,${i},${i}\n`, 'text/csv'),
    );
    const statuses = (await Promise.all(writes)).map((r) => r.status);
    assert.deepEqual(
      statuses,
      writes.map(() => 200),
    );
    const data = await everything(a);
    assert.equal(typeof data.US0378331005.a, 'number');
    assert.equal(typeof data.IE00B4L5Y983.a, 'number');
  });

  it("keeps tenants apart: B never reads, removes or clears A's values", async () => {
    await a.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { esg_score: 6.1, secret: 'a-only' } }] });
    await b.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { esg_score: 1 } }] });
    assert.deepEqual(await everything(b), { US0378331005: { esg_score: 1 } });
    assertProblem(await b.post(QUERY, { keys: ['secret'] }), 422, 'unknown_field');
    assert.deepEqual((await b.post(REMOVE, { instrument_ids: ['US0378331005'], keys: ['secret'] })).body.data, { removed: 0 });
    assert.deepEqual((await b.post(CLEAR, {})).body.data, { removed: 1 });
    assert.deepEqual(await everything(a), { US0378331005: { esg_score: 6.1, secret: 'a-only' } });
    assert.deepEqual((await a.post(REMOVE, { instrument_ids: ['US0378331005'], keys: ['esg_score'] })).body.data, { removed: 1 });
    await b.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { esg_score: 1 } }] });
    await a.post(CLEAR, {});
    assert.deepEqual(await everything(b), { US0378331005: { esg_score: 1 } });
  });
});
