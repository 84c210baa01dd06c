// The requests bench:data sends the data service and, for each, the same query written by hand
// for DuckDB (the limit it is measured against), and the check that an Arrow answer holds the JSON
// answer's values.
import type { Table } from 'apache-arrow';

export const FIELDS = ['NAME', 'ASSET_CLASS', 'CURRENCY', 'COUNTRY', 'REGION', 'SECTOR', 'MARKET_CAP', 'PRICE', 'PRICE_DATE', 'DIVIDEND_YIELD'];
export const SPLIT = 'REGION_SECTOR';
export const FACTORS = ['value', 'growth', 'momentum', 'stability', 'financial_health', 'profitability', 'size', 'dividend'];
const MIN_MARKET_CAP = 5e9;
export const JSON_TYPE = 'application/json';
export const ARROW_TYPE = 'application/vnd.apache.arrow.stream';
/** Calls of the existing cases ask for no response coding (the loopback has no use for one); the coding table measures each. */
export const IDENTITY = { 'accept-encoding': 'identity' };

export const referenceBody = (isins: string[]) => ({ instrument_ids: isins, fields: FIELDS, fields_extra: [] });
const fieldColumns = (alias: string) =>
  FIELDS.map((f) => f.toLowerCase())
    .map((c) => (c === 'price' ? `${alias}.price::double as price` : `${alias}.${c}`))
    .join(', ');
// The ISINs travel as one comma-joined string, as the service sends them (binding a long list costs more).
export const directReferenceSql = `with ids as (select string_split($1, ',') as l),
    req as (select unnest(l) as isin, generate_subscripts(l, 1) as ord from ids)
  select i.isin, ${fieldColumns('i')} from req join instruments i on i.isin = req.isin order by req.ord`;
export const universeQuery = `?universe_name=GLOBAL&${FIELDS.map((f) => `fields=${f}`).join('&')}`;
export const directUniverseSql = `select i.isin, ${fieldColumns('i')}
  from universes u join instruments i on i.isin = u.isin where u.universe_name = 'GLOBAL' order by i.isin`;

// X-Ray stars by hand: the mid-rank quintile within each (region, sector) group of GLOBAL,
// min(5, 1 + floor(5 · (below + at_or_below) / (2 · n))) over the members holding the metric.
const starsOf = (m: string) =>
  `case when ${m} is null then null else least(5, 1 + (5 * (rank() over (g order by ${m} asc nulls last) - 1 + count(${m}) over (g order by ${m} asc nulls last))) // (2 * count(${m}) over g))::integer end`;
const globalMetricsSql = `select i.isin, i.name, i.asset_class, i.market_cap, i.dividend_yield, i.region, i.sector,
    ${FACTORS.map((f) => `case when isnan(fm.${f}) then null else fm.${f} end as ${f}`).join(', ')}
  from universes u join instruments i on i.isin = u.isin left join factor_metrics fm on fm.isin = u.isin
  where u.universe_name = 'GLOBAL'`;
export const directXraySql = `select isin, ${FACTORS.map((f) => `${starsOf(f)} as ${f}_stars`).join(',\n      ')}
  from (${globalMetricsSql}) window g as (partition by region, sector) order by isin`;
export const xrayQuery = `?universe_name=GLOBAL&group_split_type=${SPLIT}&${FACTORS.map((f) => `fields=${f.toUpperCase()}_STARS`).join('&')}`;

export const searchBody = {
  query: { reference: `$ASSET_CLASS == 'EQUITY' & $MARKET_CAP > ${MIN_MARKET_CAP}`, xray: '$VALUE_STARS >= 4' },
  sorting_variables: { reference: ['DIVIDEND_YIELD'], sorting_order: ['DIVIDEND_YIELD'] },
  xray_parameters: { instrument_universe: 'GLOBAL', group_split_type: SPLIT },
};
// Only the stars the filter reads: the least work that gives the same answer.
export const directSearchSql = `select isin, name from (
    select isin, name, asset_class, market_cap, dividend_yield, ${starsOf('value')} as value_stars
    from (${globalMetricsSql}) window g as (partition by region, sector))
  where asset_class = 'EQUITY' and market_cap > ${MIN_MARKET_CAP} and value_stars >= 4
  order by dividend_yield desc nulls last, isin asc`;

/** Cells of an Arrow table that differ from the JSON answer `{data: {isin: {key: value}}}` (dates as YYYY-MM-DD, dictionaries decoded). */
export function compareWithJson(table: Table, json: { data: Record<string, Record<string, unknown>> }): number {
  const isins = Object.keys(json.data);
  let differ = Math.abs(isins.length - table.numRows);
  const columns = table.schema.fields.map((f) => ({ name: f.name, date: String(f.type).startsWith('Date'), vector: table.getChild(f.name)! }));
  for (let i = 0; i < Math.min(isins.length, table.numRows); i++) {
    const record = json.data[isins[i]!]!;
    if (columns[0]!.vector.get(i) !== isins[i]) differ++;
    for (const { name, date, vector } of columns.slice(1)) {
      const value = vector.isValid(i) ? vector.get(i) : null;
      const cell = date && value !== null ? new Date(value as number).toISOString().slice(0, 10) : value;
      if (cell !== record[name]) differ++;
    }
  }
  return differ;
}
