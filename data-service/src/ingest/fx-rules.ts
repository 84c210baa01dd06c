// What an ECB rates file (eurofxref-hist.csv) must look like, and why a row or a value is refused.
// Pure: no files, no database. One row per date, one column per currency (units per 1 EUR).
import { ownValue } from '@platform/shared';
import { parseDate, type RawRow } from './rules.ts';

/** The file's columns: DATE (any case), the currencies (three letters), and those it ignores. */
export type FxColumns = { date: string; currencies: Map<string, string>; ignored: string[] };

/**
 * Maps the header: `Date` and every three-letter currency but EUR (the base, always 1). Other
 * columns, such as the unnamed one a trailing comma makes, are ignored. Throws when there is no
 * DATE or no currency column: the file cannot be used at all.
 */
export function fxColumns(header: string[]): FxColumns {
  let date: string | undefined;
  const currencies = new Map<string, string>();
  const ignored: string[] = [];
  for (const name of header) {
    const upper = name.trim().toUpperCase();
    if (upper === 'DATE' && date === undefined) date = name;
    else if (/^[A-Z]{3}$/.test(upper) && upper !== 'EUR' && !currencies.has(upper)) currencies.set(upper, name);
    else ignored.push(name);
  }
  if (date === undefined || currencies.size === 0)
    throw new Error(`The exchange rates file needs a Date column and a column per currency, as the ECB's eurofxref-hist.csv (header: ${header.join(', ')}).`);
  return { date, currencies, ignored };
}

/** A rate of the ECB's form: digits with an optional fraction, positive, storable as decimal(20, 10). */
const RATE = /^(\d{1,10})(?:\.(\d{1,10}))?$/;
/** The ECB writes N/A where a currency has no rate that day (not yet, no longer, or a holiday). */
const ABSENT = new Set(['', 'N/A']);

export type FxRow = { date: string; rates: { currency: string; rate: string }[] };
/**
 * A row's outcome: `row` with its accepted values (none when the row is refused whole) and the
 * reasons of what was refused (a refused value leaves the row's other values accepted).
 */
export type FxChecked = { row?: FxRow; reasons: string[] };

/** Checks rows one after the other; a later row with a date already accepted is refused whole. */
export function fxRowValidator(currencies: readonly string[]): (raw: RawRow, rowNumber: number) => FxChecked {
  const seen = new Map<string, number>();
  return (raw, rowNumber) => {
    let date: string | null;
    try {
      date = parseDate(raw, 'DATE');
    } catch (error) {
      return { reasons: [(error as Error).message] };
    }
    if (date === null) return { reasons: ['DATE is missing'] };
    const first = seen.get(date);
    if (first !== undefined) return { reasons: [`duplicate DATE ${date} (first at row ${first})`] };
    seen.set(date, rowNumber);
    const rates: FxRow['rates'] = [];
    const reasons: string[] = [];
    for (const currency of currencies) {
      const value = ownValue(raw, currency)?.trim() ?? '';
      if (ABSENT.has(value.toUpperCase())) continue;
      const m = RATE.exec(value);
      if (!m) reasons.push(`${currency} '${value}' is not a rate (a positive decimal such as 1.0823, or N/A)`);
      else if (/^0*$/.test(m[1]!) && /^0*$/.test(m[2] ?? '')) reasons.push(`${currency} '${value}' is not a rate (it must be above 0)`);
      else rates.push({ currency, rate: value });
    }
    return { row: { date, rates }, reasons };
  };
}
