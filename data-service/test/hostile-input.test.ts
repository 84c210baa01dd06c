import assert from 'node:assert/strict';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { dataClient } from './support/data-client.ts';

const BATCH = '/data/custom/reference/batch/';
const CSV = '/data/custom/reference/csv/';
const QUERY = '/data/custom/reference/query/';

/**
 * Requests an attacker sent that answered 500: each is now a precise 4xx problem and stores
 * nothing.
 */
describe('data interface: hostile input is a 4xx problem and changes nothing', () => {
  let platform: TestPlatform;
  let client: ReturnType<typeof dataClient>;
  let headers: Record<string, string>;
  const raw = (path: string, json: string, extra: Record<string, string> = {}) =>
    call(platform.dataUrl + path, { method: 'POST', rawBody: json, headers: { ...headers, 'content-type': 'application/json', ...extra } });
  const stored = async () => {
    const res = await client.post(QUERY, {});
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    client = dataClient(platform.dataUrl, tenant);
    headers = { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey };
    assert.equal((await client.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { note: 'kept' } }] })).status, 200);
  });
  after(() => platform?.stop());

  it('a custom-data value "\\ud800" or holding NUL: 422 validation_failed at the value, nothing stored', async () => {
    for (const value of ['\\ud800', 'a\\u0000b', 'ok\\udc00']) {
      const res = await raw(BATCH, `{"data": [{"instrument_id": "US0378331005", "reference_data": {"note": "changed", "esg": "${value}"}}]}`);
      assertProblem(res, 422, 'validation_failed');
      assert.deepEqual(
        res.body.errors.map((e: { loc: unknown }) => e.loc),
        [['body', 'data', 0, 'reference_data', 'esg']],
        value,
      );
    }
    const keyed = await raw(BATCH, '{"data": [{"instrument_id": "US0378331005", "reference_data": {"note": "\\ud800"}}]}', {
      'idempotency-key': 'surrogate-1',
    });
    assertProblem(keyed, 422, 'validation_failed');
    assert.deepEqual(await stored(), { US0378331005: { note: 'kept' } });
  });

  it('a custom key holding NUL, and a CSV cell holding NUL: 422, nothing stored', async () => {
    const key = await raw(BATCH, '{"data": [{"instrument_id": "US0378331005", "reference_data": {"a\\u0000": 1}}]}');
    assertProblem(key, 422, 'validation_failed');
    const csv = await client.postText(CSV, 'instrument_id,note\nUS0378331005,a\u0000b\n', 'text/csv');
    assertProblem(csv, 422, 'validation_failed');
    assert.deepEqual(csv.body.errors[0].loc, ['body']);
    assert.match(csv.body.detail, /NUL character \(U\+0000\), found at character 33/);
    assert.deepEqual(await stored(), { US0378331005: { note: 'kept' } });
  });

  it('a CSV or JSON body that is not UTF-8: 400 invalid_encoding naming the byte and its line, nothing stored', async () => {
    // "Müller" in Latin-1 on line 3: the ü is the single byte FC, never part of UTF-8.
    const head = Buffer.from('instrument_id,note\nUS0378331005,changed\nIE00B4L5Y983,M');
    const latin1 = Buffer.concat([head, Buffer.from([0xfc]), Buffer.from('ller\n')]);
    const csv = await call(platform.dataUrl + CSV, { method: 'POST', rawBody: latin1, headers: { ...headers, 'content-type': 'text/csv' } });
    assertProblem(csv, 400, 'invalid_encoding');
    assert.match(csv.body.detail, new RegExp(`offset ${head.length} \\(line 3\\)`));
    const json = Buffer.concat([
      Buffer.from('{"data": [{"instrument_id": "US0378331005", "reference_data": {"note": "M'),
      Buffer.from([0xfc]),
      Buffer.from('ller"}}]}'),
    ]);
    const batch = await call(platform.dataUrl + BATCH, { method: 'POST', rawBody: json, headers: { ...headers, 'content-type': 'application/json' } });
    assertProblem(batch, 400, 'invalid_encoding');
    assert.deepEqual(await stored(), { US0378331005: { note: 'kept' } });
  });

  it('a query parameter holding NUL: 400 invalid_parameter at the parameter', async () => {
    const res = await client.get(`/data/reference/universe/?universe_name=GLOBAL&fields=NAME&fields_extra=${encodeURIComponent('no\u0000te')}`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.deepEqual(
      res.body.errors.map((e: { loc: unknown }) => e.loc),
      [['query', 'fields_extra']],
    );
  });

  it('a body that does not decompress as its Content-Encoding says: 400 malformed_json; an unknown encoding: 415', async () => {
    const body = JSON.stringify({ data: [{ instrument_id: 'US0378331005', reference_data: { note: 'gz' } }] });
    assertProblem(await raw(BATCH, body, { 'content-encoding': 'gzip' }), 400, 'malformed_json');
    assertProblem(await raw(BATCH, body, { 'content-encoding': 'zstd' }), 400, 'malformed_json');
    assertProblem(await raw(BATCH, body, { 'content-encoding': 'compress' }), 415, 'unsupported_media_type');
    assert.deepEqual(await stored(), { US0378331005: { note: 'kept' } });
  });
});
