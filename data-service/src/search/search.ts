// Smart search: instruments matching a filter over reference fields and X-Ray stars.
import type { components } from '@platform/api-types/data';
import { InvalidValue, UnknownValue, type Loc } from '../domain/errors.ts';
import type { DuckStore } from '../store/duckdb.ts';
import { SqlParams } from '../store/params.ts';
import { isFactor, type GroupSplitType, type XrayFactor } from '../xray/factors.ts';
import { assertUniverses } from '../xray/universes.ts';
import { compileFilter, filterFields } from './compile.ts';
import { allowed, FIELDS, type FieldKind } from './fields.ts';
import { parseFilter } from './parser.ts';
import { OVERRIDABLE, scopeSql } from './scope.ts';

type Schemas = components['schemas'];
export type SmartSearchRequest = Schemas['SmartSearchRequest'];
export type SmartSearchResult = Schemas['SmartSearchResult'];

const KINDS: FieldKind[] = ['reference', 'xray', 'derived'];

/**
 * Smart search (README.md, Data interface): the instruments of the instrument universe passing every filter,
 * sorted by `sorting_order` (descending unless `ascending`, nulls last, ties by ISIN ascending),
 * by ISIN without sorting. Filters and sort fields are checked before anything runs. Reference
 * fields read the tenant's custom values where it stored some under the field's lower-case name.
 */
export async function smartSearch(duck: DuckStore, tenant: string, request: SmartSearchRequest): Promise<SmartSearchResult> {
  const xp = request.xray_parameters ?? {};
  const split = (xp.group_split_type ?? request.group_split_type) as GroupSplitType | undefined;
  const scope = { instrumentUniverse: xp.instrument_universe, normalizationUniverse: xp.normalization_universe, split };
  // Filters are compiled before any I/O: a bad request fails without touching the store. The
  // placeholders they bind come first; the scope's follow (positional `$n` may appear in any order).
  const params = new SqlParams();
  // The factors whose stars the query reads: no others are computed.
  const stars = new Set<XrayFactor>();
  const where = KINDS.flatMap((kind) => {
    const text = request.query[kind];
    if (text === undefined) return [];
    const loc: Loc = ['body', 'query', kind];
    const filter = parseFilter(text, loc);
    const sql = compileFilter(filter, kind, params, loc, text);
    if (kind === 'xray')
      filterFields(filter)
        .filter(isFactor)
        .forEach((name) => stars.add(name));
    return [sql];
  });
  const sorting = checkSorting(request.sorting_variables);
  sorting.sortingOrder.filter(isFactor).forEach((name) => stars.add(name));

  return duck.use(async ({ conn, ref }) => {
    await assertUniverses(conn, ref, tenant, [scope.instrumentUniverse, scope.normalizationUniverse]);
    const stored = (await conn.runAndReadAll('select distinct key from custom_reference where tenant_id = $1 order by key', [tenant])).getRows();
    const overrides = stored.map(([key]) => String(key)).filter((key) => OVERRIDABLE.has(key));
    const { with: ctes, from } = scopeSql(ref, tenant, scope, params, [...stars], overrides);
    const direction = sorting.ascending ? 'asc' : 'desc';
    const orderBy = [...sorting.order.map((key) => `${key} ${direction} nulls last`), 'a.isin asc'];
    const sql = `${ctes}
      select a.isin, i.name ${from}
      ${where.length ? `where ${where.join(' and ')}` : ''}
      order by ${orderBy.join(', ')}`;
    const rows = (await conn.runAndReadAll(sql, params.values, params.types)).getRows();
    return {
      query: { reference: request.query.reference ?? null, xray: request.query.xray ?? null, derived: request.query.derived ?? null },
      xray_parameters: {
        normalization_universe: xp.normalization_universe ?? null,
        instrument_universe: xp.instrument_universe ?? null,
        group_split_type: split ?? null,
      },
      instruments_predefined: [],
      sorting_variables: {
        reference: sorting.reference as Schemas['ReferenceField'][],
        xray: sorting.xray as Schemas['XrayFactor'][],
        derived: sorting.derived as Schemas['DerivedField'][],
        sorting_order: sorting.sortingOrder,
        ascending: sorting.ascending,
      },
      instruments: rows.map(([isin, name]) => ({ isin: String(isin), name: name === null ? null : String(name) })),
    };
  });
}

/** The sort fields as SQL, after checking that each is known for its kind and listed for `sorting_order`. */
function checkSorting(sv: SmartSearchRequest['sorting_variables']) {
  const lists = { reference: sv?.reference ?? [], xray: sv?.xray ?? [], derived: sv?.derived ?? [] };
  const sqlOf = new Map<string, string>();
  for (const kind of KINDS) {
    lists[kind].forEach((name, i) => {
      const def = FIELDS[kind].get(name);
      if (!def) throw new UnknownValue(['body', 'sorting_variables', kind, i], `unknown ${kind} field '${name}'; allowed: ${allowed(kind)}`);
      sqlOf.set(name, def.sql);
    });
  }
  const sortingOrder = sv?.sorting_order ?? [];
  const order = sortingOrder.map((name, i) => {
    const sql = sqlOf.get(name);
    if (sql === undefined)
      throw new InvalidValue(['body', 'sorting_variables', 'sorting_order', i], `'${name}' is not listed in sorting_variables.reference, .xray or .derived`);
    return sql;
  });
  return { ...lists, sortingOrder, order, ascending: sv?.ascending ?? false };
}
