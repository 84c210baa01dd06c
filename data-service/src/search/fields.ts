import { FACTORS, starsColumn } from '../xray/factors.ts';

/**
 * The fields a filter or a sort may name, per kind, with the SQL that reads them. The SQL uses
 * the aliases of the search query: `a` the instrument universe (isin), `i` the instruments of the
 * reference data, `s` the X-Ray stars.
 */
export type FieldType = 'number' | 'text' | 'date';
export type FieldDef = { sql: string; type: FieldType };
export type FieldKind = 'reference' | 'xray' | 'derived';

const text = (sql: string): FieldDef => ({ sql, type: 'text' });
const number = (sql: string): FieldDef => ({ sql, type: 'number' });

export const REFERENCE_FIELDS: ReadonlyMap<string, FieldDef> = new Map([
  ['ISIN', text('a.isin')],
  ['NAME', text('i.name')],
  ['TICKER', text('i.ticker')],
  ['ASSET_CLASS', text('i.asset_class')],
  ['ASSET_SUBCLASS', text('i.asset_subclass')],
  ['INSTRUMENT_TYPE', text('i.instrument_type')],
  ['CURRENCY', text('i.currency')],
  ['COUNTRY', text('i.country')],
  ['REGION', text('i.region')],
  ['SECTOR', text('i.sector')],
  ['EXCHANGE', text('i.exchange')],
  ['MARKET_CAP', number('i.market_cap')],
  ['SIZE_LABEL', text('i.size_label')],
  ['PRICE', number('i.price::double')],
  ['PRICE_DATE', { sql: 'i.price_date', type: 'date' }],
  ['DIVIDEND_YIELD', number('i.dividend_yield')],
  ['TER', number('i.ter')],
  ['ANALYST_TARGET_PRICE', number('i.analyst_target_price::double')],
]);

export const XRAY_FIELDS: ReadonlyMap<string, FieldDef> = new Map(FACTORS.map((f) => [f.field, number(`s.${starsColumn(f.field)}`)]));

/** ANALYST_UPWARD_POTENTIAL = analyst target price / price − 1; null without a positive price. */
export const DERIVED_FIELDS: ReadonlyMap<string, FieldDef> = new Map([
  ['ANALYST_UPWARD_POTENTIAL', number('(i.analyst_target_price::double / nullif(i.price::double, 0) - 1)')],
]);

export const FIELDS: Record<FieldKind, ReadonlyMap<string, FieldDef>> = { reference: REFERENCE_FIELDS, xray: XRAY_FIELDS, derived: DERIVED_FIELDS };

export const allowed = (kind: FieldKind) => [...FIELDS[kind].keys()].join(', ');
