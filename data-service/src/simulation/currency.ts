// A simulation in the request's currency (docs/adr/0015-simulation-model.md): the mapped
// instruments' closes and the amounts are converted with the reference rates (docs/adr/0057-fx-rates.md)
// before anything is estimated or simulated. Pure: the rates come in as arguments.
import { fromNumber } from '@platform/shared';
import { UnknownValue, type Loc } from '../domain/errors.ts';
import { crossRate, FX_BASE, FxRateUnavailable, type FxRates } from '../fx/convert.ts';
import { formatDay } from './dates.ts';

const MS_PER_DAY = 86_400_000;
import type { CommonCloses } from './history.ts';

/**
 * The closes of `history` in `to`: each instrument's close of a day times the cross rate of that
 * day (units of `to` per 1 unit of the instrument's currency, each leg the latest rate on or before
 * the day and at most `maxAgeDays` old). An instrument already in `to` keeps its very series, so a
 * same-currency request estimates exactly what it did before conversions existed. One pass over
 * the days per converted instrument, the legs walked alongside (both are sorted by date).
 *
 * A missing or stale leg on any day of the history is a 422 `unknown_field` at
 * `asset_class_mapping.<class>` naming the pair and the day; never a rate of 1.
 */
export function closesInCurrency(
  history: CommonCloses,
  currencies: readonly string[],
  to: string,
  rates: FxRates,
  maxAgeDays: number,
  locs: readonly Loc[],
): CommonCloses {
  const { days } = history;
  const legs = new Map<string, Leg>();
  const leg = (currency: string) => legs.get(currency) ?? legs.set(currency, legOf(rates, currency)).get(currency)!;
  // One factor series per currency, shared by the instruments priced in it.
  const factors = new Map<string, Float64Array>();
  const factorsOf = (from: string, loc: Loc): Float64Array => {
    const known = factors.get(from);
    if (known) return known;
    const base = walk(leg(from), maxAgeDays);
    const quote = walk(leg(to), maxAgeDays);
    const out = new Float64Array(days.length);
    for (let k = 0; k < days.length; k++) {
      const day = days[k]!;
      const b = base(day);
      const q = quote(day);
      if (Number.isNaN(b) || Number.isNaN(q)) unavailable(rates, from, to, day, maxAgeDays, loc);
      out[k] = q / b;
    }
    factors.set(from, out);
    return out;
  };
  const closes = history.closes.map((series, i) => {
    const from = currencies[i]!;
    if (from === to) return series;
    const factor = factorsOf(from, locs[i]!);
    const out = new Float64Array(series.length);
    for (let k = 0; k < series.length; k++) out[k] = series[k]! * factor[k]!;
    return out;
  });
  return { days, closes, available: history.available };
}

/** A currency's rates per 1 EUR as day numbers and floats (the closes are floats), sorted by day. */
type Leg = { days: Int32Array; rates: Float64Array } | 'EUR';

function legOf(rates: FxRates, currency: string): Leg {
  if (currency === FX_BASE) return 'EUR';
  const series = rates.get(currency) ?? [];
  // The dates come from the reference file, well formed: Date.parse is enough.
  return { days: Int32Array.from(series, (r) => Date.parse(r.date) / MS_PER_DAY), rates: Float64Array.from(series, (r) => r.rate.toNumber()) };
}

/**
 * The leg's rate on ascending days: NaN when no rate is on or before the day or the latest one is
 * older than `maxAgeDays`.
 */
function walk(leg: Leg, maxAgeDays: number): (day: number) => number {
  if (leg === 'EUR') return () => 1;
  let j = -1;
  return (day) => {
    while (j + 1 < leg.days.length && leg.days[j + 1]! <= day) j++;
    return j < 0 || day - leg.days[j]! > maxAgeDays ? NaN : leg.rates[j]!;
  };
}

/** Throws the refusal of a pair on a day, in the words of `crossRate` (which leg, its date, the pair). */
function unavailable(rates: FxRates, from: string, to: string, day: number, maxAgeDays: number, loc: Loc): never {
  try {
    crossRate(rates, from, to, formatDay(day), maxAgeDays);
  } catch (error) {
    if (error instanceof FxRateUnavailable) throw new UnknownValue(loc, `${error.message}: the closes cannot be converted to ${to}`);
    throw error;
  }
  throw new Error(`no ${from}/${to} rate walked on ${formatDay(day)} although crossRate finds one`);
}

/** `start_amount` and `recurring_deposit_amount`, as the simulation takes them. */
export type Amounts = { startAmount: number; depositAmount: number };

/**
 * The amounts given in `from` (`amount_currency`) in `to` (`currency`), at the cross rate as of
 * `asOf`: the start date, or today when the start date is later (the latest rate known then), each
 * leg at most `maxAgeDays` old. Multiplied as exact decimals, then handed to the simulation as
 * numbers. A missing or stale leg is a 422 `unknown_field` at `amount_currency` naming the pair.
 */
export function amountsInCurrency(amounts: Amounts, from: string, to: string, asOf: string, rates: FxRates, maxAgeDays: number): Amounts {
  if (from === to) return amounts;
  let rate;
  try {
    rate = crossRate(rates, from, to, asOf, maxAgeDays);
  } catch (error) {
    if (error instanceof FxRateUnavailable) throw new UnknownValue(['body', 'amount_currency'], `${error.message}: the amounts cannot be converted to ${to}`);
    throw error;
  }
  const times = (amount: number) => fromNumber(amount).times(rate).toNumber();
  return { startAmount: times(amounts.startAmount), depositAmount: times(amounts.depositAmount) };
}

/** The date the amounts convert as of: the start date, or `today` when the start date is after it. */
export function amountRateDate(startDate: string, today: string): string {
  return startDate > today ? today : startDate;
}

/** A currency the reference file has no rates of is a 422 `unknown_field` at `field`, listing those it has. */
export function checkKnownCurrency(code: string, known: ReadonlySet<string>, field: 'currency' | 'amount_currency'): void {
  if (!known.has(code)) throw new UnknownValue(['body', field], `no exchange rates of '${code}'; known: ${[...known].sort().join(', ')}`);
}
