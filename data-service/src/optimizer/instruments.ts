import { storedKeys } from '../custom/store.ts';
import { resolveFields } from '../domain/reference-fields.ts';
import { referenceSelect, type ReferencePlan } from '../reference/sql.ts';
import { BoundedCache } from '../store/bounded-cache.ts';
import type { DuckSession, DuckStore } from '../store/duckdb.ts';
import type { TenantCache } from '../tenant-data/cache.ts';
import type { InstrumentFacts } from './engine.ts';

const FIELDS = resolveFields(['PRICE', 'CURRENCY', 'ASSET_CLASS'], ['fields']);

export type FactsReader = (tenantId: string, isins: readonly string[]) => Promise<ReadonlyMap<string, InstrumentFacts>>;

/**
 * The price, currency and asset class of instruments as the tenant sees them: the reference data,
 * with the tenant's custom values winning (as in every reference answer). ISINs the store does not
 * know are absent from the map. Answers are cached per reference version and tenant data version:
 * the portfolios of one policy ask for the same instruments, and a new price arrives only with a
 * new reference file or a write of the tenant's custom values.
 */
export function instrumentFacts(duck: DuckStore, tenants: TenantCache, limits = { entries: 2_000, weight: 200_000 }): FactsReader {
  const cache = new BoundedCache<Map<string, InstrumentFacts>>(limits, (facts) => facts.size + 1);
  return async (tenantId, isins) => {
    if (isins.length === 0) return new Map();
    const tenantVersion = await tenants.ensureFresh(tenantId);
    return duck.use((session) =>
      cache.get(session.version, `${tenantId}\n${tenantVersion}\n${[...isins].sort().join(',')}`, () => readFacts(session, tenantId, isins)),
    );
  };
}

async function readFacts({ conn, ref }: DuckSession, tenantId: string, isins: readonly string[]): Promise<Map<string, InstrumentFacts>> {
  const plan: ReferencePlan = {
    ref,
    tenantId,
    source: { kind: 'ids', isins },
    fields: FIELDS,
    overrides: new Set(
      await storedKeys(
        conn,
        tenantId,
        FIELDS.map((f) => f.key),
      ),
    ),
    extras: [],
  };
  const q = referenceSelect(plan);
  const facts = new Map<string, InstrumentFacts>();
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
}
