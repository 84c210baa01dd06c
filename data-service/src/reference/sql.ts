import type { DuckDBType, DuckDBValue } from '@duckdb/node-api';
import type { ReferenceField } from '../domain/reference-fields.ts';
import { SqlParams } from '../store/params.ts';

/** The instruments a reference answer covers: the requested ISINs, or the members of universes. */
export type InstrumentSource =
  | { kind: 'ids'; isins: readonly string[] }
  /** `name` undefined: every universe the tenant sees (the built-in ones and its own). */
  | { kind: 'universe'; name?: string };

/**
 * How a custom key that is not a reference field comes out: `json` as the stored JSON value (the
 * JSON answer), the others typed for Arrow (see `customColumnKind`).
 */
export type ExtraKind = 'json' | 'number' | 'bool' | 'text';

export type ReferencePlan = {
  /** SQL alias of the attached reference database. */
  ref: string;
  tenantId: string;
  source: InstrumentSource;
  fields: readonly ReferenceField[];
  /** Lower-case field names for which the tenant stores custom values: those win over the provider's. */
  overrides: ReadonlySet<string>;
  extras: readonly { key: string; kind: ExtraKind }[];
};

export type Statement = { sql: string; values: DuckDBValue[]; types: DuckDBType[] };

/**
 * `req`: the instruments asked for. Requested ISINs are `req(isin, ord)`, each once, keeping the
 * position of their first mention, so answers follow the request; they travel as one comma-joined
 * string (the contract's pattern has no comma): binding a 100,000-element list parameter costs
 * DuckDB more than splitting a string. Universe members are `req(isin)`, an ISIN in two universes
 * twice: they are read as a semi-join of `instruments` and ordered by ISIN, which is cheaper than
 * making them unique and joining.
 */
function sourceCte(plan: ReferencePlan, p: SqlParams): string {
  const { source, ref } = plan;
  if (source.kind === 'ids') {
    return `ids as (select string_split(${p.text(source.isins.join(','))}, ',') as l),
    req as (select isin, min(ord) as ord from (select unnest(l) as isin, generate_subscripts(l, 1) as ord from ids) group by isin)`;
  }
  const tenant = p.text(plan.tenantId);
  const named = source.name === undefined ? undefined : p.text(source.name);
  return `req as (select isin from ${ref}.universes ${named ? `where universe_name = ${named}` : ''}
        union all
        select isin from universes where tenant_id = ${tenant} ${named ? `and universe_name = ${named}` : ''})`;
}

/** `cust(isin, c0, c1, …)`: the tenant's stored JSON value of each custom key per instrument (SQL null when none). */
function customCte(plan: ReferencePlan, keys: readonly string[], p: SqlParams): string {
  const params = keys.map((k) => p.text(k));
  const columns = params.map((k, i) => `any_value(value) filter (where key = ${k}) as c${i}`);
  return `cust as (select isin, ${columns.join(', ')} from custom_reference
      where tenant_id = ${p.text(plan.tenantId)} and key in (${params.join(', ')}) and isin in (select isin from req)
      group by isin)`;
}

function fieldExpression(f: ReferenceField, custom: string | undefined): string {
  // NaN and infinities are not JSON numbers: a provider's NaN means "no value".
  const provider = f.kind === 'number' ? `(case when isfinite(i.${f.key}::double) then i.${f.key}::double end)` : `i.${f.key}`;
  if (!custom) return provider;
  // A stored JSON null is a value (it wins too); SQL null means the tenant has none for this instrument.
  const own = f.kind === 'number' ? `try_cast(${custom} as double)` : f.kind === 'date' ? `try_cast(${custom} ->> '$' as date)` : `${custom} ->> '$'`;
  return `case when ${custom} is not null then ${own} else ${provider} end`;
}

function extraExpression(kind: ExtraKind, custom: string): string {
  switch (kind) {
    case 'json':
      return custom;
    case 'number':
      return `try_cast(${custom} as double)`;
    case 'bool':
      return `try_cast(${custom} as boolean)`;
    case 'text':
      return `case json_type(${custom}) when 'VARCHAR' then ${custom} ->> '$' when 'NULL' then null else ${custom}::varchar end`;
  }
}

/** The answer's rows (`instrument_id`, then `f0…` per field and `x0…` per extra key), from `from`, in the order of `ord`. */
function answerRows(plan: ReferencePlan, p: SqlParams): { with: string; select: string[]; from: string; ord: string } {
  const cte = sourceCte(plan, p);
  const customKeys = [...plan.fields.filter((f) => plan.overrides.has(f.key)).map((f) => f.key), ...plan.extras.map((e) => e.key)];
  const column = new Map(customKeys.map((k, i) => [k, `cust.c${i}`]));
  const select = [
    'i.isin as instrument_id',
    ...plan.fields.map((f, i) => `${fieldExpression(f, column.get(f.key))} as f${i}`),
    ...plan.extras.map((e, i) => `${extraExpression(e.kind, column.get(e.key)!)} as x${i}`),
  ];
  const ctes = [cte, ...(customKeys.length > 0 ? [customCte(plan, customKeys, p)] : [])];
  const custom = customKeys.length > 0 ? 'left join cust on cust.isin = i.isin' : '';
  const from =
    plan.source.kind === 'ids'
      ? `req join ${plan.ref}.instruments i on i.isin = req.isin ${custom}`
      : `${plan.ref}.instruments i ${custom} where i.isin in (select isin from req)`;
  return { with: `with ${ctes.join(',\n')}`, select, from, ord: plan.source.kind === 'ids' ? 'req.ord' : 'i.isin' };
}

/** The names of the answer's columns: `instrument_id`, the fields' lower-case names, the extra keys. */
const columnNames = (plan: ReferencePlan) => ['instrument_id', ...plan.fields.map((f) => f.key), ...plan.extras.map((e) => e.key)];

/**
 * One row per known instrument, in answer order: `instrument_id`, then each field (typed: VARCHAR,
 * DOUBLE or DATE), then each extra custom key. Instruments the provider does not know are left out.
 */
export function referenceSelect(plan: ReferencePlan): Statement & { columns: string[] } {
  const p = new SqlParams();
  const rows = answerRows(plan, p);
  const sql = `${rows.with}
    select ${rows.select.join(',\n      ')}
    from ${rows.from}
    order by ${rows.ord}`;
  return { sql, values: p.values, types: p.types, columns: columnNames(plan) };
}

/**
 * The whole JSON answer as one string, written by DuckDB's JSON functions (about twice as fast as
 * reading the rows into JS and stringifying them): `{"data": {<isin>: {<key>: value}}, "meta": null}`,
 * DOUBLE as numbers, DATE as YYYY-MM-DD, custom values (`json` extras) as stored.
 */
export function referenceJsonSelect(plan: ReferencePlan): Statement {
  const p = new SqlParams();
  const rows = answerRows(plan, p);
  const keys = columnNames(plan).slice(1);
  const record =
    keys.length === 0
      ? `'{}'`
      : `json_object(${keys.map((k, i) => `${p.text(k)}, ${i < plan.fields.length ? `f${i}` : `x${i - plan.fields.length}`}`).join(', ')})::varchar`;
  const sql = `${rows.with},
    answer as (select ${rows.ord} as ord, ${rows.select.join(',\n      ')} from ${rows.from})
    select '{"data":{' || coalesce(string_agg(to_json(instrument_id)::varchar || ':' || ${record}, ',' order by ord), '') || '},"meta":null}'
    from answer`;
  return { sql, values: p.values, types: p.types };
}

/** The JSON types (`json_type`) each custom key holds among the answer's instruments. */
export function customTypesSelect(plan: ReferencePlan, keys: readonly string[]): Statement {
  const p = new SqlParams();
  const sql = `with ${sourceCte(plan, p)}
    select key, list(distinct json_type(value)) as types from custom_reference
    where tenant_id = ${p.text(plan.tenantId)} and key in (select unnest(${p.textList(keys)}))
      and isin in (select req.isin from req join ${plan.ref}.instruments i on i.isin = req.isin)
    group by key`;
  return { sql, values: p.values, types: p.types };
}

/** Whether the named universe exists for the tenant: a built-in one or one of its own. */
export function universeExistsSelect(ref: string, tenantId: string, name: string): Statement {
  const p = new SqlParams();
  const n = p.text(name);
  const sql = `select exists (select 1 from ${ref}.universes where universe_name = ${n})
      or exists (select 1 from universes where tenant_id = ${p.text(tenantId)} and universe_name = ${n}) as found`;
  return { sql, values: p.values, types: p.types };
}
