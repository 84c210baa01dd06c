import type { DuckStore } from '../store/duckdb.ts';
import { Params } from '../search/compile.ts';
import { BoundedCache } from './cache.ts';
import { FACTORS, starsColumn, type GroupSplitType } from './factors.ts';
import { starsSql } from './stars.ts';
import { assertUniverses, universeSql } from './universes.ts';

export type XrayRequest = {
  /** Universe whose instruments are answered. */
  universe: string;
  /** Restricts the answer further; default `universe`. */
  instrumentUniverse?: string;
  /** Universe the ranking is computed over; default `universe`. */
  normalizationUniverse?: string;
  split?: GroupSplitType;
};

/** Stars of each instrument (by ISIN, in ISIN order), one byte per factor in FACTORS order, 0 for null (compact: it is cached). */
export type StarsTable = Map<string, Uint8Array>;

/** The stars of `factor` (its index in FACTORS) in a StarsTable row. */
export const starsOf = (row: Uint8Array, factor: number): number | null => row[factor] || null;

/** Cache bounds: entries, and instrument rows over all entries (about 100 bytes each). */
export type XrayLimits = { entries: number; rows: number };

/**
 * X-Ray stars of a tenant's universe, cached per (tenant, parameters, reference data version,
 * version of the tenant's data). All eight factors are computed and cached together; the caller
 * picks the fields it needs.
 */
export class XrayService {
  private readonly cache: BoundedCache<StarsTable>;

  constructor(
    private readonly duck: DuckStore,
    limits: XrayLimits = { entries: 256, rows: 1_000_000 },
  ) {
    this.cache = new BoundedCache({ entries: limits.entries, weight: limits.rows }, (table) => table.size + 1);
  }

  /**
   * `tenantVersion`: the version of the tenant's data in this replica's cache, as
   * TenantCache.ensureFresh answered it before the call; a change of the tenant's universes
   * changes it, so results computed before are never served after. (0: the tenant has no data.)
   */
  universeStars(tenant: string, request: XrayRequest, tenantVersion = 0): Promise<StarsTable> {
    return this.duck.use(async ({ conn, ref, version }) => {
      const { universe, instrumentUniverse, normalizationUniverse, split } = request;
      await assertUniverses(conn, ref, tenant, [universe, instrumentUniverse, normalizationUniverse]);
      const key = JSON.stringify([tenant, universe, instrumentUniverse ?? universe, normalizationUniverse ?? universe, split ?? null, tenantVersion]);
      return this.cache.get(version, key, async () => {
        const params = new Params();
        const narrowed = instrumentUniverse !== undefined && instrumentUniverse !== universe;
        const answer = narrowed
          ? `select isin from ${universeSql(ref, tenant, universe, params)} intersect select isin from ${universeSql(ref, tenant, instrumentUniverse, params)}`
          : `select isin from ${universeSql(ref, tenant, universe, params)}`;
        // Ranked among the answered instruments themselves: one relation (starsSql's shorter form).
        const own = !narrowed && (normalizationUniverse === undefined || normalizationUniverse === universe);
        const ctes = own ? `with answer as (${answer})` : `with norm as (select isin from ${universeSql(ref, tenant, normalizationUniverse ?? universe, params)}),
          answer as (${answer})`;
        // Three bits per factor in one integer: one column to read instead of eight.
        const packed = FACTORS.map((f, k) => `(coalesce(${starsColumn(f.field)}, 0) << ${3 * k})`).join(' | ');
        const sql = `${ctes}
          select isin, (${packed})::integer as stars from (${starsSql(ref, split, own ? 'answer' : 'norm', 'answer')}) order by isin`;
        const chunks = await (await conn.run(sql, params.values)).fetchAllChunks();
        const rows = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.rowCount, 0) * FACTORS.length);
        const table: StarsTable = new Map();
        let r = 0;
        for (const chunk of chunks) {
          const isins = chunk.getColumnValues(0);
          const stars = chunk.getColumnValues(1) as number[];
          for (let i = 0; i < isins.length; i++, r++) {
            const row = rows.subarray(r * FACTORS.length, (r + 1) * FACTORS.length);
            for (let k = 0; k < FACTORS.length; k++) row[k] = (stars[i]! >> (3 * k)) & 7;
            table.set(String(isins[i]), row);
          }
        }
        return table;
      });
    });
  }

  stats() {
    return this.cache.stats();
  }
}
