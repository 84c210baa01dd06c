import type { GroupSplitType, XrayFactor } from '../xray/factors.ts';
import { starsSql } from '../xray/stars.ts';
import { universeSql } from '../xray/universes.ts';
import type { SqlParams } from '../store/params.ts';
import { REFERENCE_FIELDS } from './fields.ts';

/** Where a search looks: the instrument universe (default: all the tenant's universes) and how its stars are ranked. */
export type SearchScope = {
  instrumentUniverse?: string;
  /** Default: the instrument universe. */
  normalizationUniverse?: string;
  split?: GroupSplitType;
};

/**
 * The common part of a search query: CTEs and the FROM clause that give every instrument of the
 * instrument universe as `a` (isin), its reference data as `i` (null for an instrument the
 * reference data does not know) and, when `stars` names factors, their X-Ray stars as `s` (the
 * stars of no other factor are computed; none at all when it is empty).
 * `overrides`: reference fields (lower case) for which the tenant stored custom values; those win
 * over the provider's, as in reference answers. Stars rank and group on the provider's data.
 */
export function scopeSql(
  ref: string,
  tenant: string,
  scope: SearchScope,
  params: SqlParams,
  stars: readonly XrayFactor[],
  overrides: readonly string[] = [],
): { with: string; from: string } {
  const ctes = [`answer as (select isin from ${universeSql(ref, tenant, scope.instrumentUniverse, params)})`];
  let instruments = `${ref}.instruments`;
  if (overrides.length > 0) {
    const keys = overrides.map((key) => `${params.bind(key)}::varchar`);
    ctes.push(`cust as (select isin, ${keys.map((k, n) => `any_value(value) filter (where key = ${k}) as c${n}`).join(', ')}
      from custom_reference where tenant_id = ${params.bind(tenant)}::varchar and key in (${keys.join(', ')}) group by isin)`);
    const replaced = overrides.map((key, n) => `${overridden(key, `cust.c${n}`)} as ${key}`);
    ctes.push(`inst as (select i.* replace (${replaced.join(', ')}) from ${ref}.instruments i left join cust on cust.isin = i.isin)`);
    instruments = 'inst';
  }
  let from = `from answer a left join ${instruments} i on i.isin = a.isin`;
  if (stars.length > 0) {
    const norm = scope.normalizationUniverse === undefined || scope.normalizationUniverse === scope.instrumentUniverse ? 'answer' : 'norm';
    if (norm === 'norm') ctes.push(`norm as (select isin from ${universeSql(ref, tenant, scope.normalizationUniverse, params)})`);
    ctes.push(`stars as (${starsSql(ref, scope.split, norm, 'answer', stars)})`);
    from += ' left join stars s on s.isin = a.isin';
  }
  return { with: `with ${ctes.join(',\n')}`, from };
}

/** A reference column with the tenant's value winning: a stored JSON null is a value too; SQL null means none. */
function overridden(key: string, custom: string): string {
  const type = REFERENCE_FIELDS.get(key.toUpperCase())?.type;
  const own = type === 'number' ? `try_cast(${custom} as double)` : type === 'date' ? `try_cast(${custom} ->> '$' as date)` : `${custom} ->> '$'`;
  return `case when ${custom} is not null then ${own} else i.${key} end`;
}

/** The reference fields a custom key may override (all but the ISIN, which identifies the instrument). */
export const OVERRIDABLE = new Set([...REFERENCE_FIELDS.keys()].filter((name) => name !== 'ISIN').map((name) => name.toLowerCase()));
