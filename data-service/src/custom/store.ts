import { LIST, VARCHAR, listValue, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';

/**
 * A tenant's custom reference values in the replica's `custom_reference` table: one row per
 * (tenant, instrument, key), the value kept as JSON text so that its type (string, number,
 * boolean, explicit null) comes back as it was given. Every statement names the tenant.
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

/** Writes every value (replacing a stored one of the same instrument and key); returns how many. */
export async function upsertValues(conn: DuckDBConnection, tenantId: string, values: CustomValues): Promise<number> {
  const isins: string[] = [];
  const keys: string[] = [];
  const texts: string[] = [];
  for (const [isin, byKey] of values) {
    for (const [key, value] of byKey) {
      isins.push(isin);
      keys.push(key);
      texts.push(JSON.stringify(value));
    }
  }
  if (isins.length === 0) return 0;
  await conn.run(
    `insert or replace into custom_reference (tenant_id, isin, key, value)
     select $1, unnest($2), unnest($3), unnest($4)::json`,
    [tenantId, list(isins), list(keys), list(texts)],
    [VARCHAR, TEXT_LIST, TEXT_LIST, TEXT_LIST],
  );
  return isins.length;
}

/** The tenant's values, optionally only of some instruments and keys, by instrument then key. */
export async function readValues(
  conn: DuckDBConnection,
  tenantId: string,
  filter: { isins?: readonly string[]; keys?: readonly string[] },
): Promise<Record<string, Record<string, CustomValue>>> {
  const conditions = ['tenant_id = $1'];
  const values: DuckDBValue[] = [tenantId];
  const types: DuckDBType[] = [VARCHAR];
  if (filter.isins) {
    values.push(list(filter.isins));
    types.push(TEXT_LIST);
    conditions.push(`isin in (select unnest($${values.length}))`);
  }
  if (filter.keys) {
    values.push(list(filter.keys));
    types.push(TEXT_LIST);
    conditions.push(`key in (select unnest($${values.length}))`);
  }
  const reader = await conn.runAndReadAll(`select isin, key, value::varchar from custom_reference where ${conditions.join(' and ')} order by isin, key`, values, types);
  const data: Record<string, Record<string, CustomValue>> = {};
  for (const [isin, key, text] of reader.getRows() as [string, string, string][]) {
    (data[isin] ??= {})[key] = JSON.parse(text) as CustomValue;
  }
  return data;
}

/** Deletes the given keys (all when none are given) of the given instruments; returns how many values went. */
export async function removeValues(conn: DuckDBConnection, tenantId: string, isins: readonly string[], keys?: readonly string[]): Promise<number> {
  const result = keys
    ? await conn.run(
        'delete from custom_reference where tenant_id = $1 and isin in (select unnest($2)) and key in (select unnest($3))',
        [tenantId, list(isins), list(keys)],
        [VARCHAR, TEXT_LIST, TEXT_LIST],
      )
    : await conn.run('delete from custom_reference where tenant_id = $1 and isin in (select unnest($2))', [tenantId, list(isins)], [VARCHAR, TEXT_LIST]);
  return result.rowsChanged;
}

/** Deletes every value of the tenant; returns how many. */
export async function clearValues(conn: DuckDBConnection, tenantId: string): Promise<number> {
  return (await conn.run('delete from custom_reference where tenant_id = $1', [tenantId], [VARCHAR])).rowsChanged;
}
