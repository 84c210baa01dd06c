import { parseDay } from '../../src/simulation/dates.ts';
import type { FxLeg, FxTable, HistoryRequest, PriceTable } from '../../src/history/input.ts';

/** Builders of the history calculator's inputs for the tests: business days, closes, rates, requests. */

export const day = (text: string): number => parseDay(text)!;

/** `count` weekdays from `start` (a weekday), as the price table's calendar. */
export function weekdays(start: string, count: number): Int32Array {
  const days: number[] = [];
  for (let d = day(start); days.length < count; d++) {
    const weekday = (d + 4) % 7; // 0 = Sunday (1970-01-01 was a Thursday)
    if (weekday !== 0 && weekday !== 6) days.push(d);
  }
  return Int32Array.from(days);
}

/** A price table on `days`: closes by ISIN with their currency (EUR unless said). */
export function priceTable(days: Int32Array, instruments: Record<string, { closes: number[]; currency?: string }>): PriceTable {
  const isins = Object.keys(instruments);
  return {
    days,
    isins,
    currencies: isins.map((i) => instruments[i]!.currency ?? 'EUR'),
    closes: isins.map((i) => Float64Array.from(instruments[i]!.closes)),
  };
}

export const fxTable = (rates: Record<string, number[]> = {}): FxTable => new Map(Object.entries(rates).map(([c, r]) => [c, Float64Array.from(r)]));

/** The timestamp at noon UTC of a day number. */
export const noon = (d: number): string => new Date(d * 86_400_000 + 43_200_000).toISOString();

export function historyRequest(days: Int32Array, fields: Partial<HistoryRequest> = {}): HistoryRequest {
  const first = new Date(days[0]! * 86_400_000).toISOString().slice(0, 10);
  const last = new Date(days[days.length - 1]! * 86_400_000).toISOString().slice(0, 10);
  return { versions: [], flows: [], base_currency: 'EUR', from: first, to: last, frequency: 'D', ...fields };
}

/** A leg of a rate through EUR published on `dates` only: on each calendar day, the day of the last one on or before it. */
export function fxLeg(days: Int32Array, currency: string, dates: string[]): FxLeg {
  const published = dates.map(day).sort((a, b) => a - b);
  return { currency, published: Float64Array.from(days, (d) => published.filter((p) => p <= d).at(-1) ?? NaN) };
}
