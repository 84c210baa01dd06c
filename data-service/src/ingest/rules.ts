// What a vendor file must look like, and why a row is refused. Pure: no files, no database.
// Instrument, factor and universe rows are checked here row by row; price files are millions of
// rows, so their rules are the SQL predicates of `priceChecksSql`, with the same kind of reasons.
import { ownValue } from '@platform/shared';
import { isinProblem } from '../domain/isin.ts';

export type FileKind = 'instruments' | 'prices' | 'factors' | 'universe';

/** Columns of each file (upper case; the header may use any case); the first ones are required. */
export const COLUMNS: Record<FileKind, { required: string[]; optional: string[] }> = {
  instruments: {
    required: ['ISIN', 'NAME'],
    optional: [
      'TICKER',
      'ASSET_CLASS',
      'ASSET_SUBCLASS',
      'INSTRUMENT_TYPE',
      'CURRENCY',
      'COUNTRY',
      'REGION',
      'SECTOR',
      'EXCHANGE',
      'MARKET_CAP',
      'SIZE_LABEL',
      'PRICE',
      'PRICE_DATE',
      'DIVIDEND_YIELD',
      'TER',
      'ANALYST_TARGET_PRICE',
    ],
  },
  prices: { required: ['ISIN', 'DATE', 'CLOSE'], optional: [] },
  factors: { required: ['ISIN'], optional: ['VALUE', 'GROWTH', 'MOMENTUM', 'STABILITY', 'FINANCIAL_HEALTH', 'PROFITABILITY', 'SIZE', 'DIVIDEND'] },
  universe: { required: ['ISIN'], optional: [] },
};

export const FACTOR_METRICS = COLUMNS.factors.optional;

/**
 * Maps the file's header to the known columns. Throws when a required column is missing (the file
 * cannot be used at all); lists the columns it will ignore.
 */
export function matchColumns(kind: FileKind, header: string[]): { columns: Map<string, string>; ignored: string[] } {
  const known = new Set([...COLUMNS[kind].required, ...COLUMNS[kind].optional]);
  const columns = new Map<string, string>();
  const ignored: string[] = [];
  for (const name of header) {
    const upper = name.trim().toUpperCase();
    if (known.has(upper) && !columns.has(upper)) columns.set(upper, name);
    else ignored.push(name);
  }
  const missing = COLUMNS[kind].required.filter((c) => !columns.has(c));
  if (missing.length > 0)
    throw new Error(`The ${kind} file has no ${missing.join(', ')} column (header: ${header.join(', ')}). Required: ${COLUMNS[kind].required.join(', ')}.`);
  if (kind === 'factors' && !FACTOR_METRICS.some((m) => columns.has(m)))
    throw new Error(`The factors file has none of the metric columns ${FACTOR_METRICS.join(', ')}.`);
  return { columns, ignored };
}

/** A row as read: column (upper case) → text, null when empty. */
export type RawRow = Record<string, string | null>;
export type Checked<T> = { row: T } | { reason: string };

export type InstrumentRow = {
  isin: string;
  name: string;
  ticker: string | null;
  asset_class: string | null;
  asset_subclass: string | null;
  instrument_type: string | null;
  currency: string | null;
  country: string | null;
  region: string | null;
  sector: string | null;
  exchange: string | null;
  market_cap: number | null;
  size_label: string | null;
  /** Decimal text, stored exactly (decimal(20, 6)). */
  price: string | null;
  price_date: string | null;
  dividend_yield: number | null;
  ter: number | null;
  analyst_target_price: string | null;
};

export type FactorRow = { isin: string } & Record<Lowercase<(typeof FACTOR_METRICS)[number]>, number | null>;

class Refused extends Error {}
const refuse = (reason: string): never => {
  throw new Refused(reason);
};

const text = (raw: RawRow, column: string): string | null => {
  const value = ownValue(raw, column)?.trim();
  return value ? value : null;
};

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A finite decimal number (no thousands separators, no NaN), or null when empty. */
export function parseNumber(raw: RawRow, column: string, range?: { min?: number; above?: number; max?: number; below?: number; hint?: string }): number | null {
  const value = text(raw, column);
  if (value === null) return null;
  const number = Number(value);
  if (!NUMBER.test(value) || !Number.isFinite(number)) refuse(`${column} '${value}' is not a number`);
  const r = range ?? {};
  const ok =
    (r.min === undefined || number >= r.min) &&
    (r.above === undefined || number > r.above) &&
    (r.max === undefined || number <= r.max) &&
    (r.below === undefined || number < r.below);
  if (!ok) refuse(`${column} ${value} is out of range${r.hint ? ` (${r.hint})` : ''}`);
  return number;
}

/** A number checked like parseNumber, kept as its text so that it is stored as an exact decimal. */
function decimalText(raw: RawRow, column: string, range: Parameters<typeof parseNumber>[2]): string | null {
  return parseNumber(raw, column, range) === null ? null : text(raw, column);
}

/** A calendar date YYYY-MM-DD, or null when empty. */
export function parseDate(raw: RawRow, column: string): string | null {
  const value = text(raw, column);
  if (value === null) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  if (!m || !date || date.toISOString().slice(0, 10) !== value) refuse(`${column} '${value}' is not a date (YYYY-MM-DD)`);
  return value;
}

/** An upper-case code such as EQUITY or REAL_ESTATE (letters are upper-cased), or null when empty. */
function code(raw: RawRow, column: string, pattern = /^[A-Z][A-Z0-9_]*$/, example = 'REAL_ESTATE'): string | null {
  const value = text(raw, column)?.toUpperCase() ?? null;
  if (value !== null && !pattern.test(value)) refuse(`${column} '${value}' is not a code like ${example}`);
  return value;
}

function limited(raw: RawRow, column: string, max: number): string | null {
  const value = text(raw, column);
  if (value !== null && value.length > max) refuse(`${column} is longer than ${max} characters`);
  return value;
}

function isin(raw: RawRow): string {
  const value = text(raw, 'ISIN')?.toUpperCase() ?? '';
  const problem = isinProblem(value);
  if (problem) refuse(problem);
  return value;
}

const check = <T>(work: () => T): Checked<T> => {
  try {
    return { row: work() };
  } catch (error) {
    if (error instanceof Refused) return { reason: error.message };
    throw error;
  }
};

/** Checks instrument rows one after the other; a later row with an ISIN already accepted is refused. */
export function instrumentValidator(): (raw: RawRow, rowNumber: number) => Checked<InstrumentRow> {
  const seen = new Map<string, number>();
  return (raw, rowNumber) =>
    check(() => {
      const id = isin(raw);
      const name = limited(raw, 'NAME', 256) ?? refuse('NAME is missing');
      const row: InstrumentRow = {
        isin: id,
        name,
        ticker: limited(raw, 'TICKER', 32),
        asset_class: code(raw, 'ASSET_CLASS'),
        asset_subclass: code(raw, 'ASSET_SUBCLASS'),
        instrument_type: code(raw, 'INSTRUMENT_TYPE'),
        currency: code(raw, 'CURRENCY', /^[A-Z]{3}$/, 'EUR (ISO 4217)'),
        country: code(raw, 'COUNTRY', /^[A-Z]{2}$/, 'DE (ISO 3166-1 alpha-2)'),
        region: code(raw, 'REGION'),
        sector: code(raw, 'SECTOR'),
        exchange: limited(raw, 'EXCHANGE', 32),
        market_cap: parseNumber(raw, 'MARKET_CAP', { min: 0 }),
        size_label: code(raw, 'SIZE_LABEL'),
        price: decimalText(raw, 'PRICE', { above: 0, below: 1e14 }),
        price_date: parseDate(raw, 'PRICE_DATE'),
        dividend_yield: parseNumber(raw, 'DIVIDEND_YIELD', { min: 0, below: 1, hint: 'a fraction: 0.021 is 2.1 %' }),
        ter: parseNumber(raw, 'TER', { min: 0, below: 1, hint: 'a fraction: 0.002 is 0.2 %' }),
        analyst_target_price: decimalText(raw, 'ANALYST_TARGET_PRICE', { above: 0, below: 1e14 }),
      };
      const first = seen.get(id);
      if (first !== undefined) refuse(`duplicate ISIN ${id} (first at row ${first})`);
      seen.set(id, rowNumber);
      return row;
    });
}

/** Checks rows of an ISIN-keyed file against the accepted instruments; an ISIN may appear once. */
function keyedValidator<T>(accepted: ReadonlySet<string>, build: (raw: RawRow, id: string) => T): (raw: RawRow, rowNumber: number) => Checked<T> {
  const seen = new Map<string, number>();
  return (raw, rowNumber) =>
    check(() => {
      const id = isin(raw);
      if (!accepted.has(id)) refuse(`ISIN ${id} is not among the accepted instruments`);
      const row = build(raw, id);
      const first = seen.get(id);
      if (first !== undefined) refuse(`duplicate ISIN ${id} (first at row ${first})`);
      seen.set(id, rowNumber);
      return row;
    });
}

/** Raw factor metrics: any finite number (the scale is the vendor's), empty for unknown. */
export const factorValidator = (accepted: ReadonlySet<string>) =>
  keyedValidator(accepted, (raw, id) => ({ isin: id, ...Object.fromEntries(FACTOR_METRICS.map((m) => [m.toLowerCase(), parseNumber(raw, m)])) }) as FactorRow);

export const universeValidator = (accepted: ReadonlySet<string>) => keyedValidator(accepted, (_raw, id) => id);

/** A universe name as the interface uses it (GLOBAL, DEFAULT, ROBO, …). */
export function universeName(name: string): string {
  const upper = name.trim().toUpperCase();
  if (!/^[A-Z][A-Z0-9_]{0,63}$/.test(upper)) throw new Error(`Universe name '${name}' is not a code like ROBO (letters, digits, _).`);
  return upper;
}

/**
 * The price rules as SQL over a staged file `stage` (columns ISIN, DATE, CLOSE as the file had
 * them, row order = file order, so row = rowid + 1) and the accepted `instruments`: one row per
 * price row with its typed values and the reason it is refused (null when accepted). A date may
 * appear once per ISIN.
 */
export function priceChecksSql(stage: string, instruments: string): string {
  const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
  return `with typed as (
      select s.rowid as rid, upper(trim(s."ISIN"::varchar)) as isin, s."DATE"::varchar as date_text, s."CLOSE"::varchar as close_text,
        try_cast(s."DATE" as date) as date, try_cast(s."CLOSE" as double) as close
      from ${stage} s
    ), checked as (
      select t.*, case
          when t.isin is null or t.isin = '' then ${q('ISIN is missing')}
          when i.isin is null then ${q('ISIN ')} || t.isin || ${q(' is not among the accepted instruments')}
          when t.date is null or not regexp_full_match(trim(t.date_text), '\\d{4}-\\d{2}-\\d{2}( 00:00:00)?')
            then ${q("DATE '")} || coalesce(t.date_text, '') || ${q("' is not a date (YYYY-MM-DD)")}
          when t.close is null or not isfinite(t.close) or t.close <= 0 then ${q("CLOSE '")} || coalesce(t.close_text, '') || ${q("' is not a positive number")}
        end as reason
      from typed t left join ${instruments} i on i.isin = t.isin
    ), duplicates as (
      select isin, date, min(rid) as first from checked where reason is null group by isin, date having count(*) > 1
    )
    select c.rid, c.isin, c.date, c.close, coalesce(c.reason, case when c.rid > d.first
        then ${q('duplicate ISIN and DATE (first at row ')} || (d.first + 1)::varchar || ')' end) as reason
    from checked c left join duplicates d on d.isin = c.isin and d.date = c.date`;
}
