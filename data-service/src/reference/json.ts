import type { Json } from '@duckdb/node-api';

export type ReferenceJson = { data: Record<string, Record<string, unknown>>; meta: null };

/**
 * The JSON answer from rows of `referenceSelect` read with `getRowsJson()` (DOUBLE as numbers,
 * DATE as YYYY-MM-DD, null as null): keyed by ISIN, then by lower-case field name or custom key.
 * Columns from `extrasFrom` on hold a custom value's JSON text (null when the instrument has none).
 */
export function referenceJson(rows: readonly Json[][], columns: readonly string[], extrasFrom: number): ReferenceJson {
  const data: ReferenceJson['data'] = {};
  for (const row of rows) {
    const record: Record<string, unknown> = {};
    for (let c = 1; c < columns.length; c++) {
      const value = row[c] ?? null;
      record[columns[c]!] = c >= extrasFrom && value !== null ? JSON.parse(value as string) : value;
    }
    data[row[0] as string] = record;
  }
  return { data, meta: null };
}
