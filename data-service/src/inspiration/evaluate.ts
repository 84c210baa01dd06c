// Inspirations: saved X-Ray filters (built-in and the tenant's), evaluated over a universe.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { components } from '@platform/api-types/data';
import type { Loc } from '../domain/errors.ts';
import { compileFilter, filterFields } from '../search/compile.ts';
import { parseFilter } from '../search/parser.ts';
import { scopeSql } from '../search/scope.ts';
import { SqlParams } from '../store/params.ts';
import { isFactor, type XrayFactor } from '../xray/factors.ts';
import type { InspirationDefinition } from './builtins.ts';

export type Inspiration = components['schemas']['Inspiration'];

/** Parses and checks an inspiration's X-Ray filter (an InvalidExpression or UnknownValue at `loc` otherwise). */
export function checkInspirationFilter(xray: string, loc: Loc): void {
  compileFilter(parseFilter(xray, loc), 'xray', new SqlParams(), loc, xray);
}

/**
 * The instruments of each definition: those of all the tenant's universes together whose stars
 * (ranked over that same set, one group) pass its X-Ray filter, ordered by ISIN. One query for all
 * definitions: a boolean column per definition, and the stars of the factors their filters name.
 */
export async function withInstruments(conn: DuckDBConnection, ref: string, tenant: string, definitions: InspirationDefinition[]): Promise<Inspiration[]> {
  if (definitions.length === 0) return [];
  const params = new SqlParams();
  const stars = new Set<XrayFactor>();
  const tests = definitions.map((d) => {
    const loc = ['inspiration', d.id, 'query', 'xray'];
    const filter = parseFilter(d.query.xray, loc);
    filterFields(filter)
      .filter(isFactor)
      .forEach((name) => stars.add(name));
    return `coalesce(${compileFilter(filter, 'xray', params, loc, d.query.xray)}, false)`;
  });
  const { with: ctes, from } = scopeSql(ref, tenant, {}, params, [...stars]);
  const sql = `${ctes}
    select * from (select a.isin, i.name, ${tests.map((t, k) => `${t} as m${k}`).join(', ')} ${from})
    where ${tests.map((_, k) => `m${k}`).join(' or ')}
    order by isin`;
  const rows = (await conn.runAndReadAll(sql, params.values, params.types)).getRows();
  return definitions.map((d, k) => ({
    ...d,
    instruments: rows.filter((row) => row[k + 2] === true).map(([isin, name]) => ({ isin: String(isin), name: name === null ? null : String(name) })),
  }));
}
