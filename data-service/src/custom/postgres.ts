import type { Queryable } from '../tenant-data/postgres.ts';
import type { CustomValues } from './store.ts';

/**
 * A tenant's custom reference values in Postgres (data_custom_reference), the source of truth of
 * every replica's `custom_reference` cache (store.ts). Run inside TenantCache.write, which bumps
 * the tenant's version in the same transaction.
 */

/** Writes every value (replacing a stored one of the same instrument and key); returns how many. */
export async function upsertValuesPg(db: Queryable, tenantId: string, values: CustomValues): Promise<number> {
  const isins: string[] = [];
  const keys: string[] = [];
  const json: string[] = [];
  for (const [isin, byKey] of values) {
    for (const [key, value] of byKey) {
      isins.push(isin);
      keys.push(key);
      json.push(JSON.stringify(value));
    }
  }
  if (isins.length === 0) return 0;
  // Three arrays unnested side by side: one statement whatever the number of values. collectValues
  // leaves one value per instrument and key, as `on conflict do update` requires. An unchanged
  // value is not rewritten (uploading 300,000 values again: 2.4 s instead of 4.7 s).
  await db.query(
    `insert into data_custom_reference (tenant_id, isin, key, value)
     select $1, v.isin, v.key, v.value::jsonb from unnest($2::text[], $3::text[], $4::text[]) as v(isin, key, value)
     on conflict (tenant_id, isin, key) do update set value = excluded.value
       where data_custom_reference.value is distinct from excluded.value`,
    [tenantId, isins, keys, json],
  );
  return isins.length;
}

/** Deletes the given keys (all when none are given) of the given instruments; returns how many values went. */
export async function removeValuesPg(db: Queryable, tenantId: string, isins: readonly string[], keys?: readonly string[]): Promise<number> {
  const result = keys
    ? await db.query('delete from data_custom_reference where tenant_id = $1 and isin = any($2::text[]) and key = any($3::text[])', [tenantId, isins, keys])
    : await db.query('delete from data_custom_reference where tenant_id = $1 and isin = any($2::text[])', [tenantId, isins]);
  return result.rowCount ?? 0;
}

/** Deletes every value of the tenant; returns how many. */
export async function clearValuesPg(db: Queryable, tenantId: string): Promise<number> {
  return (await db.query('delete from data_custom_reference where tenant_id = $1', [tenantId])).rowCount ?? 0;
}
