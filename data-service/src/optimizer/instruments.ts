import { storedKeys } from '../custom/store.ts';
import { resolveFields } from '../domain/reference-fields.ts';
import { referenceSelect, type ReferencePlan } from '../reference/sql.ts';
import { BoundedCache } from '../store/bounded-cache.ts';
import type { DuckSession, DuckStore } from '../store/duckdb.ts';
import type { TenantCache } from '../tenant-data/cache.ts';
import type { InstrumentFacts, OptimizerRequest } from './engine.ts';
import type { RatesReader } from './rates.ts';

const FIELDS = resolveFields(['PRICE', 'CURRENCY', 'ASSET_CLASS'], ['fields']);

/** What the facts depend on: the request's instruments and cash, its base currency and its day. */
export type FactsRequest = Pick<OptimizerRequest, 'holdings' | 'model_portfolio' | 'base_currency' | 'requested_at'>;
export type FactsReader = (tenantId: string, request: FactsRequest) => Promise<ReadonlyMap<string, InstrumentFacts>>;

/** The ISINs a request is about: its instrument holdings and its model portfolio. */
export const requestIsins = (request: Pick<OptimizerRequest, 'holdings' | 'model_portfolio'>): string[] => [
  ...new Set([...Object.keys(request.holdings).filter((k) => !k.startsWith('$')), ...Object.keys(request.model_portfolio)]),
];

/**
 * The price, currency and asset class of instruments as the tenant sees them: the reference data,
 * with the tenant's custom values winning (as in every reference answer). ISINs the store does not
 * know are absent from the map. Answers are cached per reference version and tenant data version:
 * the portfolios of one policy ask for the same instruments, and a new price arrives only with a
 * new reference file or a write of the tenant's custom values.
 *
 * Each fact of an instrument priced in another currency than the request's base currency gets the
 * rate of its currency from `rates` on the request's day, and so does each non-zero cash holding
 * in another currency (under its holdings key, `$USD`, as one unit of that currency). Rates are not
 * cached here: they depend on the base currency and the day, which the reader of rates knows.
 */
export function instrumentFacts(duck: DuckStore, tenants: TenantCache, rates: RatesReader, limits = { entries: 2_000, weight: 200_000 }): FactsReader {
  const cache = new BoundedCache<Map<string, InstrumentFacts>>(limits, (facts) => facts.size + 1);
  const prices = async (tenantId: string, isins: readonly string[]): Promise<ReadonlyMap<string, InstrumentFacts>> => {
    if (isins.length === 0) return new Map();
    const tenantVersion = await tenants.ensureFresh(tenantId);
    return duck.use((session) =>
      cache.get(session.version, `${tenantId}\n${tenantVersion}\n${[...isins].sort().join(',')}`, () => readFacts(session, tenantId, isins)),
    );
  };
  return async (tenantId, request) => withRates(await prices(tenantId, requestIsins(request)), request, rates);
}

/** The facts with the rate of every other currency the request needs (see instrumentFacts). */
export async function withRates(facts: ReadonlyMap<string, InstrumentFacts>, request: FactsRequest, rates: RatesReader): Promise<Map<string, InstrumentFacts>> {
  const base = request.base_currency;
  const cash = Object.entries(request.holdings).flatMap(([key, amount]) => (key.startsWith('$') && key !== `$${base}` && amount !== 0 ? [key.slice(1)] : []));
  const priced = [...facts.values()].flatMap((f) => (f.currency !== null && f.currency !== base ? [f.currency] : []));
  const currencies = [...new Set([...cash, ...priced])].sort();
  const answer = new Map(facts);
  if (currencies.length === 0) return answer;
  const known = await rates(base, currencies, request.requested_at.slice(0, 10));
  for (const [isin, fact] of facts) {
    if (fact.currency !== null && fact.currency !== base) answer.set(isin, { ...fact, toBase: known.get(fact.currency) });
  }
  for (const currency of cash) answer.set(`$${currency}`, { price: 1, currency, assetClass: null, toBase: known.get(currency) });
  return answer;
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
