// A simulation in the request's currency (docs/adr/0015-simulation-model.md): the mapped
// instruments' closes and the amounts are converted with the reference rates (docs/adr/0057-fx-rates.md)
// before anything is estimated or simulated. Pure: the rates come in as arguments.
import { fromNumber } from '@platform/shared';
import { UnknownValue, type Loc } from '../domain/errors.ts';
import { crossRate, FX_BASE, FxRateUnavailable, type FxRates } from '../fx/convert.ts';
import { formatDay, parseDay } from './dates.ts';
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
  const closes = history.closes.map((series, i) => {
    const from = currencies[i]!;
    if (from === to) return series;
    const base = legWalker(rates, from);
    const quote = legWalker(rates, to);
    const out = new Float64Array(series.length);
    for (let k = 0; k < days.length; k++) {
      const day = days[k]!;
      const b = base(day, maxAgeDays);
      const q = quote(day, maxAgeDays);
      if (Number.isNaN(b) || Number.isNaN(q)) unavailable(rates, from, to, day, maxAgeDays, locs[i]!);
      out[k] = series[k]! * (q / b);
    }
    return out;
  });
  return { days, closes, available: history.available };
}

/**
 * Rate of `currency` per 1 EUR on ascending days, as a float (the closes are floats): NaN when no
 * rate is on or before the day or the latest one is older than `maxAgeDays`.
 */
function legWalker(rates: FxRates, currency: string): (day: number, maxAgeDays: number) => number {
  if (currency === FX_BASE) return () => 1;
  const series = rates.get(currency) ?? [];
  const legDays = Int32Array.from(series, (r) => parseDay(r.date)!);
  const legRates = Float64Array.from(series, (r) => r.rate.toNumber());
  let j = -1;
  return (day, maxAgeDays) => {
    while (j + 1 < legDays.length && legDays[j + 1]! <= day) j++;
    return j < 0 || day - legDays[j]! > maxAgeDays ? NaN : legRates[j]!;
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
