// The daily series of a currency pair, as the HTTP interface answers it (docs/adr/0057-fx-rates.md).
import { DateDay, Float64, Table, tableToIPC, vectorFromArray } from 'apache-arrow';
import { InvalidValue, NotFound } from '../domain/errors.ts';
import { pairSeries } from './convert.ts';
import type { FxCurrencies, FxReader } from './store.ts';

/** The longest range one request may ask for: 30 years of days (about 7,800 points). */
export const MAX_SERIES_DAYS = 10_958;

/** Rates are given to 12 significant digits: more than the ECB's 5 or 6 can carry through a cross rate. */
export const SERIES_DIGITS = 12;

export type SeriesRequest = { base: string; quote: string; from: string; to: string };
export type SeriesPoint = { date: string; rate: number };

/**
 * Units of `quote` per 1 `base` on each date from `from` to `to` where every non-EUR leg has a
 * published rate. A currency without any rate is a 404 naming the path parameter; a pair of one
 * currency, or a range that is reversed or longer than MAX_SERIES_DAYS, a 422 naming the parameter.
 */
export async function pairSeriesAnswer(request: SeriesRequest, read: FxReader, known: FxCurrencies): Promise<SeriesPoint[]> {
  const { base, quote, from, to } = request;
  if (base === quote) throw new InvalidValue(['path', 'quote'], `is the same currency as base (${base}): its rate is 1 on every date`);
  if (from > to) throw new InvalidValue(['query', 'to'], `must not be before from (${from})`);
  const span = (Date.parse(to) - Date.parse(from)) / 86_400_000;
  if (span >= MAX_SERIES_DAYS) throw new InvalidValue(['query', 'to'], `is more than ${MAX_SERIES_DAYS} days after from; ask for the series in parts`);
  const currencies = await known();
  for (const [name, code] of [
    ['base', base],
    ['quote', quote],
  ] as const)
    if (!currencies.has(code)) throw new NotFound(`No exchange rates of '${code}'.`, ['path', name]);
  const rates = await read([base, quote], { from, to });
  return pairSeries(rates, base, quote, from, to).map((p) => ({ date: p.date, rate: p.rate.toSignificantDigits(SERIES_DIGITS).toNumber() }));
}

/** The series as an Arrow IPC stream: `date` (Date32) and `rate` (Float64), the same values as the JSON. */
export function seriesToArrow(points: readonly SeriesPoint[]): Uint8Array {
  const table = new Table({
    date: vectorFromArray(
      points.map((p) => new Date(`${p.date}T00:00:00Z`)),
      new DateDay(),
    ),
    rate: vectorFromArray(
      points.map((p) => p.rate),
      new Float64(),
    ),
  });
  return tableToIPC(table, 'stream');
}
