import assert from 'node:assert/strict';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { tableFromIPC, type Table } from 'apache-arrow';
import { tableFromIPC as flechetteFromIPC } from '@uwdata/flechette';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { resultToArrowStream, type ArrowColumnSpec } from '../src/arrow/duckdb-chunks.ts';
import { REFERENCE_FIELDS } from '../src/domain/reference-fields.ts';
import { dataClient } from './support/data-client.ts';
import { KNOWN, TENANT_A, buildFixture } from './support/reference-fixture.ts';

const ARROW = 'application/vnd.apache.arrow.stream';

/** An Arrow cell as the JSON answer writes it: Date32 (epoch milliseconds here) as YYYY-MM-DD, Int64 as a number. */
const asJson = (value: unknown, typeName: string): unknown => {
  if (value === null || value === undefined) return null;
  if (typeName.startsWith('Date32')) return new Date(value as number).toISOString().slice(0, 10);
  if (typeof value === 'bigint') return Number(value);
  return value;
};

const typesOf = (table: Table) => Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)]));

/**
 * The rows of an IPC stream as two independent readers see them, cells in JSON form: apache-arrow
 * and @uwdata/flechette (its own decoder, dictionaries and all).
 */
function decodeBoth(bytes: Uint8Array): { table: Table; arrow: Record<string, unknown>[]; flechette: Record<string, unknown>[] } {
  const table = tableFromIPC(bytes);
  const types = typesOf(table);
  const names = Object.keys(types);
  const json = (row: Record<string, unknown>) => Object.fromEntries(names.map((n) => [n, asJson(row[n], types[n]!)]));
  const arrow = table.toArray().map((row: Record<string, unknown>) => json(row));
  const other = flechetteFromIPC(bytes, { useBigInt: false });
  assert.deepEqual(
    other.schema.fields.map((f) => f.name),
    names,
    'flechette reads the same columns',
  );
  const flechette = other.toArray().map((row) => json(row as Record<string, unknown>));
  return { table, arrow, flechette };
}

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

  /** The stream of a query decoded by both readers, and DuckDB's own JSON rows of it. */
  const roundTrip = async (sql: string, dictionary: readonly string[] = []) => {
    // DuckDB's JSON rows hold BIGINT as text.
    const expected = (await conn.runAndReadAll(sql)).getRowObjectsJson().map((r) => (r.l === undefined ? r : { ...r, l: Number(r.l) }));
    const result = await conn.stream(sql);
    const columns: ArrowColumnSpec[] = result.columnNames().map((name) => ({ name, dictionary: dictionary.includes(name) }));
    const { table, arrow, flechette } = decodeBoth(await resultToArrowStream(result, columns));
    assert.deepEqual(arrow, expected, 'apache-arrow reads what DuckDB holds');
    assert.deepEqual(flechette, expected, 'flechette reads what DuckDB holds');
    return table;
  };

  const TEXT = `case range % 7 when 0 then null when 1 then '' when 2 then 'short' when 3 then 'a string longer than twelve bytes ' || range
      when 4 then 'Grüße € ' || range || ' — déjà vu 🚀' when 5 then 'é€' else 'exactly12byt' end`;

  it('copies every supported type with its nulls, over several chunks, into one record batch', async () => {
    const table = await roundTrip(`
      select range::int as i, range * 1000000000000 as l, range / 8.0 as d,
        case when range % 3 = 0 then null else range % 2 = 0 end as b,
        date '1969-12-25' + range::int as dt,
        ${TEXT} as s
      from range(5000)`);
    assert.deepEqual(typesOf(table), { i: 'Int32', l: 'Int64', d: 'Float64', b: 'Bool', dt: 'Date32<DAY>', s: 'Utf8' });
    assert.equal(table.batches.length, 1, 'the chunks are one batch');
    assert.equal(table.getChild('s')!.nullCount, 715);
    assert.equal(table.getChild('b')!.nullCount, 1667);
  });

  it('keeps rows in place when chunks do not start on a byte boundary', async () => {
    // DuckDB hands these over in chunks of 13 and 7 rows, and of 1,755 rows: validity bits shift.
    await roundTrip(`select * from (select range::int as n, case when range % 3 = 0 then null else range / 2 end as d, ${TEXT} as s from range(13)
      union all select 100 + range::int, case when range % 2 = 0 then null else range::double end, ${TEXT} from range(7))`);
    await roundTrip(
      `select range::int as n, case when range % 5 = 0 then null else range::double * 1.5 end as d, ${TEXT} as s from range(5000) where range % 7 <> 0`,
    );
  });

  it('copies long strings that do not lie back to back in DuckDB', async () => {
    await conn.run(`create or replace table words as select range::int as i, 'value number ' || range || repeat(' ü', (range % 9)::int) as w from range(3000)`);
    // A hash order scatters the rows over the table's string memory.
    await roundTrip(`select w, i from words order by hash(i)`);
    await roundTrip(`select case when i % 4 = 0 then 'tiny' else w end as w from words order by hash(i * 7)`);
  });

  it('dictionary-encodes marked text columns, with the narrowest index for their distinct values', async () => {
    const table = await roundTrip(
      `select case range % 6 when 0 then null when 1 then 'EQUITY' when 2 then 'FIXED_INCOME' when 3 then 'Société Générale — preferred' when 4 then 'É' else '' end as few,
        'a longer category, number ' || (range % 300) as some, 'value ' || range as many, 'plain' as text
      from range(40000)`,
      // Long values (looked up by their bytes) and short ones (by their DuckDB header), both beyond a table's first size.
      ['few', 'some', 'many'],
    );
    assert.deepEqual(typesOf(table), {
      few: 'Dictionary<Int8, Utf8>',
      some: 'Dictionary<Int16, Utf8>',
      many: 'Dictionary<Int32, Utf8>',
      text: 'Utf8',
    });
    const dictionary = table.getChild('few')!.data[0]!.dictionary!;
    assert.deepEqual(dictionary.toArray(), ['EQUITY', 'FIXED_INCOME', 'Société Générale — preferred', 'É', ''], 'each value once, nulls not among them');
    assert.equal(table.getChild('few')!.nullCount, 6667);
    assert.equal(table.getChild('some')!.data[0]!.dictionary!.length, 300);
    assert.equal(table.getChild('many')!.data[0]!.dictionary!.length, 40000);
  });

  it('writes the schema of an empty result', async () => {
    const result = await conn.stream(`select 'x' as s, 1.5::double as d, current_date as dt, 'c' as c where false`);
    const table = tableFromIPC(await resultToArrowStream(result, [{ name: 's' }, { name: 'd' }, { name: 'dt' }, { name: 'c', dictionary: true }]));
    assert.equal(table.numRows, 0);
    assert.deepEqual(typesOf(table), { s: 'Utf8', d: 'Float64', dt: 'Date32<DAY>', c: 'Dictionary<Int8, Utf8>' });
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
          reference_data: {
            esg_score: 6.1,
            restricted: false,
            mixed: 7.4,
            note: 'long enough to leave the inline bytes — ü',
            price: 1.25,
            name: 'Apple (house)',
            currency: 'Dollar — américain',
          },
        },
        { instrument_id: 'IE00B4L5Y983', reference_data: { esg_score: 7, restricted: true, mixed: 'A', nothing: null, price_date: '2020-02-29' } },
        { instrument_id: 'DE0005140008', reference_data: { mixed: true, note: 'ok ü', ter: 0.5 } },
        { instrument_id: 'NL0010273215', reference_data: { price: null } },
      ],
    });
    assert.equal(up.status, 200, up.text);
  });
  after(() => platform?.stop());

  /**
   * The Arrow answer, read by apache-arrow and by flechette, and the JSON answer to the same
   * request agree on every row, column and value.
   */
  const assertSameAsJson = (bytes: Uint8Array, json: Record<string, Record<string, unknown>>): Table => {
    const { table, arrow, flechette } = decodeBoth(bytes);
    const types = typesOf(table);
    assert.deepEqual(flechette, arrow, 'both readers read the same rows');
    assert.deepEqual(
      arrow.map((r) => r.instrument_id),
      Object.keys(json),
      'same instruments in the same order',
    );
    for (const row of arrow) {
      const record = json[row.instrument_id as string]!;
      assert.deepEqual(
        table.schema.fields.slice(1).map((f) => f.name),
        Object.keys(record),
      );
      for (const [key, value] of Object.entries(record)) {
        // A Utf8 custom column holds other JSON values as their JSON text.
        const expected = types[key] === 'Utf8' && value !== null && typeof value !== 'string' ? JSON.stringify(value) : value;
        assert.deepEqual(row[key], expected, `${row.instrument_id}.${key}`);
      }
    }
    return table;
  };

  it('answers the same values as JSON for every field type, custom columns and nulls, typed as the contract says', async () => {
    const body = { instrument_ids: isins, fields, fields_extra: extras };
    const json = await a.post('/data/reference/query/', body);
    assert.equal(json.status, 200, json.text);
    const arrow = await a.bytes('/data/reference/query/', ARROW, body);
    assert.equal(arrow.status, 200);
    assert.equal(arrow.contentType, ARROW);
    const table = assertSameAsJson(arrow.bytes, json.body.data);
    const kind = { text: 'Utf8', number: 'Float64', date: 'Date32<DAY>' };
    assert.deepEqual(typesOf(table), {
      instrument_id: 'Utf8',
      // Categories (asset class, currency, country…) are dictionary-encoded.
      ...Object.fromEntries(REFERENCE_FIELDS.map((f) => [f.key, f.category ? 'Dictionary<Int8, Utf8>' : kind[f.kind]])),
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
    // The custom values are really there (not both sides null), a category's too.
    assert.equal(table.get(3)!.price, 1.25);
    assert.equal(table.get(0)!.price, null);
    assert.equal(table.get(3)!.name, 'Apple (house)');
    assert.equal(table.get(3)!.currency, 'Dollar — américain');
    assert.equal(table.get(0)!.currency, 'EUR');
    assert.equal(table.get(2)!.currency, null);
    assert.deepEqual(
      table.getChild('currency')!.data[0]!.dictionary!.toArray(),
      ['EUR', 'USD', 'Dollar — américain'],
      'each currency once, in order of appearance',
    );
  });

  it('answers a universe the same way, by ISIN', async () => {
    const query = '/data/reference/universe/?universe_name=GLOBAL&fields=NAME&fields=PRICE_DATE&fields=MARKET_CAP&fields_extra=mixed&fields_extra=restricted';
    const json = await a.get(query);
    const arrow = await a.bytes(query, 'application/octet-stream');
    assert.equal(arrow.contentType, 'application/octet-stream');
    assert.deepEqual(Object.keys(json.body.data), ['DE0005140008', 'FR0000130809', 'IE00B4L5Y983', 'NL0010273215', 'US0378331005']);
    assertSameAsJson(arrow.bytes, json.body.data);
  });

  it('answers the schema and no rows when no instrument is known', async () => {
    const arrow = await a.bytes('/data/reference/query/', ARROW, { instrument_ids: ['XS1234567890'], fields: ['NAME', 'PRICE'], fields_extra: ['esg_score'] });
    const table = tableFromIPC(arrow.bytes);
    assert.equal(table.numRows, 0);
    assert.deepEqual(typesOf(table), { instrument_id: 'Utf8', name: 'Utf8', price: 'Float64', esg_score: 'Float64' });
  });
});
