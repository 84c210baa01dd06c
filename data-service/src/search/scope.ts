import type { GroupSplitType } from '../xray/factors.ts';
import { starsSql } from '../xray/stars.ts';
import { universeSql } from '../xray/universes.ts';
import type { Params } from './compile.ts';

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
 * reference data does not know) and, when `stars` is asked for, its X-Ray stars as `s`.
 */
export function scopeSql(ref: string, tenant: string, scope: SearchScope, params: Params, stars: boolean): { with: string; from: string } {
  const ctes = [`answer as (select isin from ${universeSql(ref, tenant, scope.instrumentUniverse, params)})`];
  let from = `from answer a left join ${ref}.instruments i on i.isin = a.isin`;
  if (stars) {
    const norm = scope.normalizationUniverse === undefined || scope.normalizationUniverse === scope.instrumentUniverse
      ? 'answer'
      : 'norm';
    if (norm === 'norm') ctes.push(`norm as (select isin from ${universeSql(ref, tenant, scope.normalizationUniverse, params)})`);
    ctes.push(`stars as (${starsSql(ref, scope.split, norm, 'answer')})`);
    from += ' left join stars s on s.isin = a.isin';
  }
  return { with: `with ${ctes.join(',\n')}`, from };
}
