import { storedKeys } from '../custom/store.ts';
import { resolveFields } from '../domain/reference-fields.ts';
import { referenceSelect, type ReferencePlan } from '../reference/sql.ts';
import type { DuckStore } from '../store/duckdb.ts';
import type { TenantCache } from '../tenant-data/cache.ts';
import type { InstrumentFacts } from './engine.ts';

const FIELDS = resolveFields(['PRICE', 'CURRENCY', 'ASSET_CLASS'], ['fields']);

/**
 * The price, currency and asset class of instruments as the tenant sees them: the reference data,
 * with the tenant's custom values winning (as in every reference answer). ISINs the store does not
 * know are absent from the map.
 */
export async function instrumentFacts(
  duck: DuckStore,
  tenants: TenantCache,
  tenantId: string,
  isins: readonly string[],
): Promise<Map<string, InstrumentFacts>> {
  const facts = new Map<string, InstrumentFacts>();
  if (isins.length === 0) return facts;
  await tenants.ensureFresh(tenantId);
  return duck.use(async ({ conn, ref }) => {
    const keys = FIELDS.map((f) => f.key);
    const plan: ReferencePlan = {
      ref,
      tenantId,
      source: { kind: 'ids', isins },
      fields: FIELDS,
      overrides: new Set(await storedKeys(conn, tenantId, keys)),
      extras: [],
    };
    const q = referenceSelect(plan);
    // Columns: instrument_id, then the fields in FIELDS' order.
    for (const [isin, price, currency, assetClass] of (await conn.runAndReadAll(q.sql, q.values, q.types)).getRowsJson()) {
      const p = price === null ? null : Number(price);
      facts.set(String(isin), {
        price: p !== null && Number.isFinite(p) ? p : null,
        currency: currency === null ? null : String(currency),
        assetClass: assetClass === null ? null : String(assetClass),
      });
    }
    return facts;
  });
}
