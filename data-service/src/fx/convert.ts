// Converting between currencies with the ECB's daily rates (docs/adr/0057-fx-rates.md). Pure: the
// rates come in as arguments. Every rate is units of a currency per 1 EUR, so a pair converts
// through EUR; a missing or stale leg is an error, never a rate of 1.
import { parseDecimal, type Money } from '@platform/shared';

/** The currency the rates are quoted against: 1 EUR = rate units of the currency. */
export const FX_BASE = 'EUR';

/** One published rate: `rate` units of the currency per 1 EUR on `date` (YYYY-MM-DD). */
export type FxRate = { date: string; rate: Money };

/** The rates of each currency, sorted by date ascending (EUR itself is never listed: it is 1). */
export type FxRates = ReadonlyMap<string, readonly FxRate[]>;

/** A pair could not be converted as of a date: no leg on or before it (`missing`) or only an old one (`stale`). */
export class FxRateUnavailable extends Error {
  constructor(
    readonly reason: 'missing' | 'stale',
    readonly base: string,
    readonly quote: string,
    message: string,
  ) {
    super(message);
  }
}

const ONE = parseDecimal('1');
const DAY_MS = 86_400_000;
const days = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);

/** The latest rate of `series` on or before `asOf` (binary search: the series is sorted by date). */
export function rateOnOrBefore(series: readonly FxRate[], asOf: string): FxRate | undefined {
  let lo = 0;
  let hi = series.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (series[mid]!.date <= asOf) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? undefined : series[lo - 1];
}

/**
 * Units of `quote` per 1 `base` as of `asOf`: rate(quote) / rate(base), each leg the latest rate on
 * or before the date and at most `maxAgeDays` old. A currency with itself is exactly 1.
 */
export function crossRate(rates: FxRates, base: string, quote: string, asOf: string, maxAgeDays: number): Money {
  if (base === quote) return ONE;
  const pair = `${base}/${quote}`;
  const forPair = (currency: string) => (pair === `${FX_BASE}/${currency}` ? '' : ` (for ${pair})`);
  const leg = (currency: string): Money => {
    if (currency === FX_BASE) return ONE;
    const found = rateOnOrBefore(rates.get(currency) ?? [], asOf);
    if (!found) throw new FxRateUnavailable('missing', base, quote, `no ${FX_BASE}/${currency} rate on or before ${asOf}${forPair(currency)}`);
    if (days(found.date, asOf) > maxAgeDays)
      throw new FxRateUnavailable(
        'stale',
        base,
        quote,
        `${FX_BASE}/${currency} rate of ${found.date} is older than ${maxAgeDays} days on ${asOf}${forPair(currency)}`,
      );
    return found.rate;
  };
  return leg(quote).div(leg(base));
}

/** `amount` of `from` in `to` as of `asOf` (exact up to the decimal's 40 significant digits). */
export function convert(rates: FxRates, amount: Money, from: string, to: string, asOf: string, maxAgeDays: number): Money {
  return amount.times(crossRate(rates, from, to, asOf, maxAgeDays));
}

/**
 * The daily series of a pair: one point per date on which every leg other than EUR has a published
 * rate (no carrying forward: a series shows what was published), from `from` to `to` inclusive.
 */
export function pairSeries(rates: FxRates, base: string, quote: string, from: string, to: string): { date: string; rate: Money }[] {
  const legs = [base, quote].filter((c) => c !== FX_BASE);
  const inRange = (c: string) => new Map((rates.get(c) ?? []).filter((r) => r.date >= from && r.date <= to).map((r) => [r.date, r.rate]));
  const byLeg = new Map(legs.map((c) => [c, inRange(c)]));
  const dates = legs.length === 0 ? [] : [...byLeg.get(legs[0]!)!.keys()].filter((d) => legs.every((c) => byLeg.get(c)!.has(d))).sort();
  const at = (c: string, d: string) => (c === FX_BASE ? ONE : byLeg.get(c)!.get(d)!);
  return dates.map((date) => ({ date, rate: base === quote ? ONE : at(quote, date).div(at(base, date)) }));
}
