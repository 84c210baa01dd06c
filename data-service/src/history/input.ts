import type { Frequency } from '../simulation/dates.ts';

/**
 * What the history calculator is given (docs/adr/0058-portfolio-history.md). The request is plain
 * JSON, as it travels over NATS from the management service; the prices and rates are typed arrays
 * that the data service fills from DuckDB in one query each.
 */

export type HistoryFrequency = Extract<Frequency, 'D' | 'W' | 'M'>;
export const HISTORY_FREQUENCIES: readonly HistoryFrequency[] = ['D', 'W', 'M'];

/** A decimal as text (`"12.50"`) or as a JSON number. */
export type DecimalInput = string | number;

/** The holdings in force from `from` (RFC 3339 UTC) until the next version's `from`. */
export type HistoryVersion = {
  from: string;
  /** Units by ISIN, or cash by `$` and currency code (`$EUR`). */
  holdings: Record<string, DecimalInput>;
};

/** A deposit (positive) or withdrawal (negative) of cash, counted at the end of its day. */
export type HistoryFlow = { at: string; amount: DecimalInput; currency: string };

/** A model to compare with: weights by ISIN and the rest in cash, the weights and cash summing to 1. */
export type HistoryModel = { weights: Record<string, number>; cash_weight: number };

export type HistoryRequest = {
  /** Sorted by `from`. */
  versions: HistoryVersion[];
  flows: HistoryFlow[];
  base_currency: string;
  /** `YYYY-MM-DD`, both included. */
  from: string;
  to: string;
  frequency: HistoryFrequency;
  model?: HistoryModel;
};

/**
 * Closes on one calendar of business days. `closes[i]` is instrument `isins[i]`'s close in
 * `currencies[i]` on `days[k]`, NaN where it has none (the last close before it is used). The days
 * may begin before the request's `from` so that a close there can be carried into it.
 */
export type PriceTable = {
  /** Days since 1970-01-01 (UTC), ascending. */
  days: Int32Array;
  isins: readonly string[];
  currencies: readonly string[];
  closes: readonly Float64Array[];
  /**
   * The reference data's last day with a close (days since 1970-01-01), when known: the period's
   * days end there, a close is not carried past the data into days not yet priced.
   */
  lastClose?: number;
};

/**
 * Exchange rates on the price table's days: the base-currency value of one unit of a currency,
 * NaN where there is none (the last rate before it is used). The base currency needs no entry.
 */
export type FxTable = ReadonlyMap<string, Float64Array>;

/**
 * Where the rates of an FxTable come from, to refuse an old one (docs/adr/0057-fx-rates.md): per
 * currency, its legs through EUR (the currency and the base currency, EUR itself needing none), each
 * with the day (since 1970-01-01) of the rate it uses on each of the price table's days, NaN before
 * its first.
 */
export type FxLeg = { currency: string; published: Float64Array };
export type FxAges = { maxAgeDays: number; legs: ReadonlyMap<string, readonly FxLeg[]> };
