import { CsvError, parse } from 'csv-parse/sync';
import { InvalidValue } from '../domain/errors.ts';
import type { CustomValue } from './store.ts';

/**
 * The CSV upload of custom reference data (contract: uploadCustomReferenceCsv): RFC 4180, a header
 * row whose first cell is `instrument_id` and whose other cells are custom keys, then one row per
 * instrument. Errors are 422s located as `["body", <row, header is 1>, <column name>]`.
 */

const ISIN = /^[A-Z]{2}[A-Z0-9]{9}[0-9]$/;
const CUSTOM_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
/** The limits of the JSON batch (CustomReferenceEntry, CustomValue), so that both ways take the same data. */
const MAX_KEYS = 100;
const MAX_ROWS = 100_000;
const MAX_VALUE_LENGTH = 1024;

export type CsvRow = { row: number; isin: string; values: [string, CustomValue][] };

/** A cell as the contract types it: a JSON number, true/false, else the text; an empty cell is no value. */
export function csvCellValue(cell: string): CustomValue | undefined {
  if (cell === '') return undefined;
  if (JSON_NUMBER.test(cell)) {
    const n = Number(cell);
    if (Number.isFinite(n)) return n;
  }
  if (cell === 'true') return true;
  if (cell === 'false') return false;
  return cell;
}

export function parseCustomReferenceCsv(text: string): { keys: string[]; rows: CsvRow[] } {
  let records: string[][];
  try {
    records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true });
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const row = typeof error.records === 'number' ? error.records + 1 : 1;
    throw new InvalidValue(['body', row], `not RFC 4180 CSV: ${error.message}`);
  }
  const [header, ...body] = records;
  if (!header || header[0] !== 'instrument_id') {
    throw new InvalidValue(['body', 1, header?.[0] ?? ''], "the first header cell must be 'instrument_id'");
  }
  const keys = header.slice(1);
  if (keys.length === 0) throw new InvalidValue(['body', 1], 'the header names no custom key');
  if (keys.length > MAX_KEYS) throw new InvalidValue(['body', 1, keys[MAX_KEYS]!], `at most ${MAX_KEYS} custom keys`);
  keys.forEach((key, i) => {
    if (!CUSTOM_KEY.test(key)) throw new InvalidValue(['body', 1, key], 'a custom key is a letter then up to 63 letters, digits or underscores');
    if (keys.indexOf(key) !== i) throw new InvalidValue(['body', 1, key], 'the key appears twice in the header');
  });
  if (body.length > MAX_ROWS) throw new InvalidValue(['body', MAX_ROWS + 2], `at most ${MAX_ROWS} rows`);

  const rows = body.map((cells, i): CsvRow => {
    const row = i + 2;
    if (cells.length !== header.length) {
      const column = cells.length < header.length ? header[cells.length]! : `column ${header.length + 1}`;
      throw new InvalidValue(['body', row, column], `the row has ${cells.length} cells, the header ${header.length}`);
    }
    const isin = cells[0]!;
    if (!ISIN.test(isin))
      throw new InvalidValue(['body', row, 'instrument_id'], `'${isin.slice(0, 40)}' is not an ISIN (must match ^[A-Z]{2}[A-Z0-9]{9}[0-9]$)`);
    const values: [string, CustomValue][] = [];
    keys.forEach((key, k) => {
      const cell = cells[k + 1]!;
      if (cell.length > MAX_VALUE_LENGTH) throw new InvalidValue(['body', row, key], `a value is at most ${MAX_VALUE_LENGTH} characters`);
      const value = csvCellValue(cell);
      if (value !== undefined) values.push([key, value]);
    });
    return { row, isin, values };
  });
  return { keys, rows };
}
