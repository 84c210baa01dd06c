// X-Ray: the factor stars of a universe's instruments, ranked over a normalisation universe, optionally split by group.
import type { DuckSession, DuckStore } from '../store/duckdb.ts';
import { SqlParams } from '../store/params.ts';
import { encodeXrayAnswer, type StarsTable } from './answer.ts';
import { BoundedCache } from '../store/bounded-cache.ts';
import { FACTORS, starsColumn, type GroupSplitType, type XrayFactor } from './factors.ts';
import { starsSql } from './stars.ts';
import { assertUniverses, universeSql } from './universes.ts';

export { starsOf, type StarsTable } from './answer.ts';

export type XrayRequest = {
  /** Universe whose instruments are answered. */
  universe: string;
  /** Restricts the answer further; default `universe`. */
  instrumentUniverse?: string;
  /** Universe the ranking is computed over; default `universe`. */
  normalizationUniverse?: string;
  split?: GroupSplitType;
};

/**
 * Cache bounds: entries, and weight over all entries in instrument rows (about 100 bytes each): a
 * stars table weighs its rows, an encoded answer its bytes / 100.
 */
export type XrayLimits = { entries: number; rows: number };

const ROW_BYTES = 100;

/**
 * X-Ray stars of a tenant's universe, cached per (tenant, parameters, reference data version,
 * version of the tenant's data). All eight factors are computed and cached together; the caller
 * picks the fields it needs. The encoded answer of each field set asked for is cached beside the
 * stars, within the same bounds, so that a repeated request is a copy of bytes.
 */
export class XrayService {
  private readonly cache: BoundedCache<StarsTable | Buffer>;

  constructor(
    private readonly duck: DuckStore,
    limits: XrayLimits = { entries: 256, rows: 1_000_000 },
  ) {
    this.cache = new BoundedCache({ entries: limits.entries, weight: limits.rows }, (value) =>
      value instanceof Map ? value.size + 1 : Math.ceil(value.byteLength / ROW_BYTES) + 1,
    );
  }

  /**
   * `tenantVersion`: the version of the tenant's data in this replica's cache, as
   * TenantCache.ensureFresh answered it before the call; a change of the tenant's universes
   * changes it, so results computed before are never served after. (0: the tenant has no data.)
   */
  universeStars(tenant: string, request: XrayRequest, tenantVersion = 0): Promise<StarsTable> {
    return this.duck.use(async (session) => this.stars(session, tenant, request, await this.key(session, tenant, request, tenantVersion)));
  }

  /** The JSON body of GET /xray/universe/ with `fields` (see encodeXrayAnswer), cached per field list. */
  universeAnswer(tenant: string, request: XrayRequest, fields: readonly XrayFactor[], tenantVersion = 0): Promise<Buffer> {
    return this.duck.use(async (session) => {
      const key = await this.key(session, tenant, request, tenantVersion);
      const columns = [...new Set(fields)];
      // Stars keys are JSON arrays: an answer's key never equals one.
      const answerKey = `answer ${JSON.stringify(columns)} ${key}`;
      return this.cache.get(session.version, answerKey, async () =>
        encodeXrayAnswer(await this.stars(session, tenant, request, key), columns),
      ) as Promise<Buffer>;
    });
  }

  stats() {
    return this.cache.stats();
  }

  /** Checks the universes (NotFound) and gives the cache key of the stars. */
  private async key({ conn, ref }: DuckSession, tenant: string, request: XrayRequest, tenantVersion: number): Promise<string> {
    const { universe, instrumentUniverse, normalizationUniverse, split } = request;
    await assertUniverses(conn, ref, tenant, [universe, instrumentUniverse, normalizationUniverse]);
    return JSON.stringify([tenant, universe, instrumentUniverse ?? universe, normalizationUniverse ?? universe, split ?? null, tenantVersion]);
  }

  private stars({ conn, ref, version }: DuckSession, tenant: string, request: XrayRequest, key: string): Promise<StarsTable> {
    return this.cache.get(version, key, async (): Promise<StarsTable> => {
      const { universe, instrumentUniverse, normalizationUniverse, split } = request;
      const params = new SqlParams();
      const narrowed = instrumentUniverse !== undefined && instrumentUniverse !== universe;
      const answer = narrowed
        ? `select isin from ${universeSql(ref, tenant, universe, params)} intersect select isin from ${universeSql(ref, tenant, instrumentUniverse, params)}`
        : `select isin from ${universeSql(ref, tenant, universe, params)}`;
      // Ranked among the answered instruments themselves: one relation (starsSql's shorter form).
      const own = !narrowed && (normalizationUniverse === undefined || normalizationUniverse === universe);
      const ctes = own
        ? `with answer as (${answer})`
        : `with norm as (select isin from ${universeSql(ref, tenant, normalizationUniverse ?? universe, params)}),
          answer as (${answer})`;
      // Three bits per factor in one integer: one column to read instead of eight.
      const packed = FACTORS.map((f, k) => `(coalesce(${starsColumn(f.field)}, 0) << ${3 * k})`).join(' | ');
      const sql = `${ctes}
        select isin, (${packed})::integer as stars from (${starsSql(ref, split, own ? 'answer' : 'norm', 'answer')}) order by isin`;
      const chunks = await (await conn.run(sql, params.values, params.types)).fetchAllChunks();
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
    }) as Promise<StarsTable>;
  }
}
