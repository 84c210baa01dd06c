import assert from 'node:assert/strict';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { tableFromIPC, type Table } from 'apache-arrow';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { resultToArrowStream } from '../src/arrow/duckdb-chunks.ts';
import { REFERENCE_FIELDS } from '../src/domain/reference-fields.ts';
import { dataClient } from './support/data-client.ts';
import { KNOWN, TENANT_A, buildFixture } from './support/reference-fixture.ts';

const ARROW = 'application/vnd.apache.arrow.stream';

/** An Arrow cell as the JSON answer writes it: Date32 (epoch milliseconds here) as YYYY-MM-DD, Int64 as a number. */
const asJson = (value: unknown, typeName: string): unknown => {
  if (value === null) return null;
  if (typeName.startsWith('Date32')) return new Date(value as number).toISOString().slice(0, 10);
  if (typeof value === 'bigint') return Number(value);
  return value;
};

const typesOf = (table: Table) => Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)]));

describe('Arrow from DuckDB result chunks', () => {
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:');
    conn = await instance.connect();
  });
  after(() => {
    conn.closeSync();
    instance.closeSync();
  });

  const roundTrip = async (sql: string) => {
    const expected = (await conn.runAndReadAll(sql)).getRowObjectsJson();
    const result = await conn.stream(sql);
    const names = result.columnNames();
    const table = tableFromIPC(
      await resultToArrowStream(
        result,
        names.map((name) => ({ name })),
      ),
    );
    const types = typesOf(table);
    const actual = table.toArray().map((row) => Object.fromEntries(names.map((n) => [n, asJson(row[n], types[n]!)])));
    return { table, expected, actual };
  };

  it('copies every supported type with its nulls, over several chunks', async () => {
    const { table, expected, actual } = await roundTrip(`
      select range::int as i, range * 1000000000000 as l, range / 8.0 as d,
        case when range % 3 = 0 then null else range % 2 = 0 end as b,
        date '1969-12-25' + range::int as dt,
        case range % 5 when 0 then null when 1 then '' when 2 then 'short' when 3 then 'a string longer than twelve bytes ' || range else 'Grüße € ' || range end as s
      from range(5000)`);
    assert.deepEqual(typesOf(table), { i: 'Int32', l: 'Int64', d: 'Float64', b: 'Bool', dt: 'Date32<DAY>', s: 'Utf8' });
    assert.ok(table.batches.length > 1, 'one batch per DuckDB chunk');
    assert.equal(table.getChild('s')!.nullCount, 1000);
    assert.equal(table.getChild('b')!.nullCount, 1667);
    assert.deepEqual(
      actual,
      expected.map((r) => ({ ...r, l: Number(r.l) })),
    );
  });

  it('writes the schema of an empty result', async () => {
    const { table } = await roundTrip(`select 'x' as s, 1.5::double as d, current_date as dt where false`);
    assert.equal(table.numRows, 0);
    assert.deepEqual(typesOf(table), { s: 'Utf8', d: 'Float64', dt: 'Date32<DAY>' });
  });

  it('refuses a type it has no reader for rather than guessing', async () => {
    const result = await conn.stream('select 1.5::decimal(10, 2) as price');
    await assert.rejects(resultToArrowStream(result, [{ name: 'price' }]), /DECIMAL .*cast it in SQL/);
  });
});

describe('reference data as Arrow', () => {
  let platform: TestPlatform;
  let a: ReturnType<typeof dataClient>;
  const isins = ['NL0010273215', 'XS1234567890', 'IE00B4L5Y983', 'DE0005140008', 'US0378331005', 'FR0000130809', 'US5949181045'];
  const fields = REFERENCE_FIELDS.map((f) => f.name);
  const extras = ['esg_score', 'restricted', 'mixed', 'note', 'nothing', 'price'];

  before(async () => {
    platform = await startTestPlatform((await buildFixture(KNOWN)).env);
    a = dataClient(platform.dataUrl, await platform.tenant(TENANT_A));
    const up = await a.post('/data/custom/reference/batch/', {
      data: [
        {
          instrument_id: 'US0378331005',
          reference_data: { esg_score: 6.1, restricted: false, mixed: 7.4, note: 'long enough to leave the inline bytes', price: 1.25, name: 'Apple (house)' },
        },
        { instrument_id: 'IE00B4L5Y983', reference_data: { esg_score: 7, restricted: true, mixed: 'A', nothing: null, price_date: '2020-02-29' } },
        { instrument_id: 'DE0005140008', reference_data: { mixed: true, note: 'ok', ter: 0.5 } },
        { instrument_id: 'NL0010273215', reference_data: { price: null } },
      ],
    });
    assert.equal(up.status, 200, up.text);
  });
  after(() => platform?.stop());

  /** The Arrow answer and the JSON answer to the same request agree on every row, column and value. */
  const assertSameAsJson = (table: Table, json: Record<string, Record<string, unknown>>) => {
    const types = typesOf(table);
    const rows = table.toArray();
    assert.deepEqual(
      rows.map((r) => r.instrument_id),
      Object.keys(json),
      'same instruments in the same order',
    );
    for (const row of rows) {
      const record = json[row.instrument_id as string]!;
      assert.deepEqual(
        table.schema.fields.slice(1).map((f) => f.name),
        Object.keys(record),
      );
      for (const [key, value] of Object.entries(record)) {
        const cell = asJson(row[key], types[key]!);
        // A Utf8 custom column holds other JSON values as their JSON text.
        const expected = types[key] === 'Utf8' && value !== null && typeof value !== 'string' ? JSON.stringify(value) : value;
        assert.deepEqual(cell, expected, `${row.instrument_id}.${key}`);
      }
    }
  };

  it('answers the same values as JSON for every field type, custom columns and nulls, typed as the contract says', async () => {
    const body = { instrument_ids: isins, fields, fields_extra: extras };
    const json = await a.post('/data/reference/query/', body);
    assert.equal(json.status, 200, json.text);
    const arrow = await a.bytes('/data/reference/query/', ARROW, body);
    assert.equal(arrow.status, 200);
    assert.equal(arrow.contentType, ARROW);
    const table = tableFromIPC(arrow.bytes);
    const kind = { text: 'Utf8', number: 'Float64', date: 'Date32<DAY>' };
    assert.deepEqual(typesOf(table), {
      instrument_id: 'Utf8',
      ...Object.fromEntries(REFERENCE_FIELDS.map((f) => [f.key, kind[f.kind]])),
      // `price` is a requested field already: no second column.
      esg_score: 'Float64',
      restricted: 'Bool',
      mixed: 'Utf8',
      note: 'Utf8',
      nothing: 'Float64',
    });
    assert.equal(table.schema.fields[0]!.nullable, false);
    assert.ok(table.schema.fields.slice(1).every((f) => f.nullable));
    assert.equal(table.numRows, 6);
    assertSameAsJson(table, json.body.data);
    // The custom values are really there (not both sides null).
    assert.equal(table.get(3)!.price, 1.25);
    assert.equal(table.get(0)!.price, null);
    assert.equal(table.get(3)!.name, 'Apple (house)');
  });

  it('answers a universe the same way, by ISIN', async () => {
    const query = '/data/reference/universe/?universe_name=GLOBAL&fields=NAME&fields=PRICE_DATE&fields=MARKET_CAP&fields_extra=mixed&fields_extra=restricted';
    const json = await a.get(query);
    const arrow = await a.bytes(query, 'application/octet-stream');
    assert.equal(arrow.contentType, 'application/octet-stream');
    const table = tableFromIPC(arrow.bytes);
    assert.deepEqual(Object.keys(json.body.data), ['DE0005140008', 'FR0000130809', 'IE00B4L5Y983', 'NL0010273215', 'US0378331005']);
    assertSameAsJson(table, json.body.data);
  });

  it('answers the schema and no rows when no instrument is known', async () => {
    const arrow = await a.bytes('/data/reference/query/', ARROW, { instrument_ids: ['XS1234567890'], fields: ['NAME', 'PRICE'], fields_extra: ['esg_score'] });
    const table = tableFromIPC(arrow.bytes);
    assert.equal(table.numRows, 0);
    assert.deepEqual(typesOf(table), { instrument_id: 'Utf8', name: 'Utf8', price: 'Float64', esg_score: 'Float64' });
  });
});
