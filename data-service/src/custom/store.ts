// Custom reference data: a tenant's own values per instrument and key, overlaid on the provider's.
import { LIST, VARCHAR, listValue, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';

/**
 * A tenant's custom reference values in the replica's `custom_reference` table, its cache of
 * Postgres (postgres.ts; tenant-data/cache.ts keeps it current): one row per (tenant, instrument,
 * key), the value kept as JSON text so that its type (string, number, boolean, explicit null) comes
 * back as it was given. Every statement names the tenant.
 */

export type CustomValue = string | number | boolean | null;
/** Values to write: instrument → key → value. */
export type CustomValues = Map<string, Map<string, CustomValue>>;

const list = (values: readonly string[]) => listValue([...values]);
const TEXT_LIST = LIST(VARCHAR);

/** The keys the tenant stores values under (among `among` when given), sorted. */
export async function storedKeys(conn: DuckDBConnection, tenantId: string, among?: readonly string[]): Promise<string[]> {
  const reader = among
    ? await conn.runAndReadAll(
        'select distinct key from custom_reference where tenant_id = $1 and key in (select unnest($2)) order by key',
        [tenantId, list(among)],
        [VARCHAR, TEXT_LIST],
      )
    : await conn.runAndReadAll('select distinct key from custom_reference where tenant_id = $1 order by key', [tenantId], [VARCHAR]);
  return reader.getRows().map((r) => String(r[0]));
}

/**
 * Writes every value (replacing a stored one of the same instrument and key); returns how many.
 * Run it in a transaction (TenantCache does): the table has no key (schema/main/002), so a stored
 * value is deleted before the new one is inserted. The values go through an appender into a
 * staging table of the connection: binding them as list parameters costs seconds for 100,000
 * instruments.
 */
export async function upsertValues(conn: DuckDBConnection, tenantId: string, values: CustomValues): Promise<number> {
  await conn.run('create temp table if not exists custom_reference_staging (isin varchar not null, key varchar not null, value varchar not null)');
  await conn.run('delete from custom_reference_staging');
  const appender = await conn.createAppender('custom_reference_staging', 'main', 'temp');
  let count = 0;
  try {
    for (const [isin, byKey] of values) {
      for (const [key, value] of byKey) {
        appender.appendVarchar(isin);
        appender.appendVarchar(key);
        appender.appendVarchar(JSON.stringify(value));
        appender.endRow();
        count++;
      }
    }
  } finally {
    appender.closeSync();
  }
  if (count > 0) {
    await conn.run(
      `delete from custom_reference c using custom_reference_staging s
       where c.tenant_id = $1 and c.isin = s.isin and c.key = s.key`,
      [tenantId],
      [VARCHAR],
    );
    await conn.run(
      `insert into custom_reference (tenant_id, isin, key, value)
       select $1, isin, key, value::json from custom_reference_staging`,
      [tenantId],
      [VARCHAR],
    );
  }
  await conn.run('delete from custom_reference_staging');
  return count;
}

/** `isin in (…)` for up to 100,000 ISINs, passed as one comma-joined string (ISINs hold no comma). */
const isinIn = (param: string) => `isin in (select unnest(string_split(${param}, ',')))`;

/**
 * The tenant's values, optionally only of some instruments and keys, as the JSON text of the query
 * answer (`{"data": {<isin>: {<key>: value}}, "meta": null}`, by ISIN then key), written by DuckDB.
 */
export async function readValuesJson(
  conn: DuckDBConnection,
  tenantId: string,
  filter: { isins?: readonly string[]; keys?: readonly string[] },
): Promise<string> {
  const conditions = ['tenant_id = $1'];
  const values: DuckDBValue[] = [tenantId];
  const types: DuckDBType[] = [VARCHAR];
  if (filter.isins) {
    values.push(filter.isins.join(','));
    types.push(VARCHAR);
    conditions.push(isinIn(`$${values.length}`));
  }
  if (filter.keys) {
    values.push(list(filter.keys));
    types.push(TEXT_LIST);
    conditions.push(`key in (select unnest($${values.length}))`);
  }
  const sql = `with per as (
      select isin, '{' || string_agg(to_json(key)::varchar || ':' || value::varchar, ',' order by key) || '}' as record
      from custom_reference where ${conditions.join(' and ')} group by isin)
    select '{"data":{' || coalesce(string_agg(to_json(isin)::varchar || ':' || record, ',' order by isin), '') || '},"meta":null}' from per`;
  return String((await conn.runAndReadAll(sql, values, types)).getRows()[0]![0]);
}

/** Deletes the given keys (all when none are given) of the given instruments; returns how many values went. */
export async function removeValues(conn: DuckDBConnection, tenantId: string, isins: readonly string[], keys?: readonly string[]): Promise<number> {
  const result = keys
    ? await conn.run(
        `delete from custom_reference where tenant_id = $1 and ${isinIn('$2')} and key in (select unnest($3))`,
        [tenantId, isins.join(','), list(keys)],
        [VARCHAR, VARCHAR, TEXT_LIST],
      )
    : await conn.run(`delete from custom_reference where tenant_id = $1 and ${isinIn('$2')}`, [tenantId, isins.join(',')], [VARCHAR, VARCHAR]);
  return result.rowsChanged;
}

/** Deletes every value of the tenant; returns how many. */
export async function clearValues(conn: DuckDBConnection, tenantId: string): Promise<number> {
  return (await conn.run('delete from custom_reference where tenant_id = $1', [tenantId], [VARCHAR])).rowsChanged;
}
