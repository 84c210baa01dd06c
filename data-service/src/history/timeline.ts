import { InvalidValue, UnknownValue, type Loc } from '../domain/errors.ts';
import { FX_BASE } from '../fx/convert.ts';
import { formatDay, parseDay } from '../simulation/dates.ts';
import { HISTORY_FREQUENCIES, type DecimalInput, type FxAges, type FxTable, type HistoryRequest, type PriceTable } from './input.ts';

/**
 * The request laid on the price table's days: which days are in the period, what each holding is
 * worth in the base currency on each of them, which version is in force at the end of each, and the
 * flows of each day in the base currency. Checks the request as it goes; a bad field is an
 * InvalidValue or UnknownValue at its place in the request, before anything is computed.
 */
export type Timeline = {
  /** Days of the period (a subarray of the price table's days). */
  days: Int32Array;
  /** Index of the period's first day in the price table, to look one business day back. */
  offset: number;
  /** Held columns: instruments and cash currencies, each with its base-currency unit value per day. */
  unitValues: Float64Array[];
  /** Whether a column is cash. */
  isCash: boolean[];
  /** Units per version and column, row-major (`versions × columns`). */
  units: Float64Array;
  /** Version in force at the end of each day, −1 before the first. */
  versionOf: Int32Array;
  /** Deposits minus withdrawals of each day in the base currency (0 on the first day: in its value). */
  flows: Float64Array;
  /** Column of each model instrument and its weight, when a model is given. */
  model?: { columns: Int32Array; weights: Float64Array; cashWeight: number };
};

const MS_PER_DAY = 86_400_000;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;
const CURRENCY = /^[A-Z]{3}$/;

function dayOfTimestamp(text: string, loc: Loc): number {
  const ms = TIMESTAMP.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms)) throw new InvalidValue(loc, 'must be an RFC 3339 timestamp in UTC (2026-01-31T09:30:00Z)');
  return Math.floor(ms / MS_PER_DAY);
}

function decimal(value: DecimalInput, loc: Loc): number {
  const n = typeof value === 'number' ? value : DECIMAL.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw new InvalidValue(loc, 'must be a decimal number');
  return n;
}

function day(text: string, loc: Loc): number {
  const d = parseDay(text);
  if (d === undefined) throw new InvalidValue(loc, 'must be a date (YYYY-MM-DD)');
  return d;
}

/** Fills NaN with the last value before it, starting from `before` (NaN when there is none). */
function carried(series: Float64Array, into: Float64Array, offset: number): void {
  let last = NaN;
  for (let k = 0; k < offset; k++) if (!Number.isNaN(series[k]!)) last = series[k]!;
  for (let t = 0; t < into.length; t++) {
    const x = series[offset + t]!;
    if (!Number.isNaN(x)) last = x;
    into[t] = last;
  }
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * `ages`, when given, refuses a rate older than its limit on a day it converts a holding, the
 * model or a flow (docs/adr/0057-fx-rates.md); without it the last rate is carried on.
 */
/**
 * The period's days in the price table, `[first, end)`: its business days from `from` to `to`, and
 * none after the reference data's last close. Empty when there is none (a weekend, or a period
 * after the data), which is not an error: the answer then has no points.
 */
export function periodBounds(request: HistoryRequest, prices: PriceTable): { first: number; end: number } {
  const from = day(request.from, ['from']);
  const to = Math.min(day(request.to, ['to']), prices.lastClose ?? Infinity);
  if (day(request.to, ['to']) < from) throw new InvalidValue(['to'], 'must not be before from');
  let first = 0;
  while (first < prices.days.length && prices.days[first]! < from) first++;
  let end = first;
  while (end < prices.days.length && prices.days[end]! <= to) end++;
  return { first, end };
}

export function buildTimeline(request: HistoryRequest, prices: PriceTable, fx: FxTable, ages?: FxAges): Timeline {
  if (!Array.isArray(request.versions)) throw new InvalidValue(['versions'], 'must be a list');
  if (!Array.isArray(request.flows)) throw new InvalidValue(['flows'], 'must be a list');
  request.versions.forEach((version, v) => {
    if (!isRecord(version?.holdings)) throw new InvalidValue(['versions', v, 'holdings'], 'must be an object of units by ISIN or $currency');
  });
  if (request.model !== undefined && !isRecord(request.model?.weights)) throw new InvalidValue(['model', 'weights'], 'must be an object of weights by ISIN');
  if (!HISTORY_FREQUENCIES.includes(request.frequency)) throw new InvalidValue(['frequency'], `must be one of ${HISTORY_FREQUENCIES.join(', ')}`);
  if (!CURRENCY.test(request.base_currency)) throw new InvalidValue(['base_currency'], 'must be a currency code (EUR)');
  const { first, end } = periodBounds(request, prices);
  if (end === first) throw new InvalidValue(['from'], `no business day with prices from ${request.from} to ${request.to}`);
  const days = prices.days.subarray(first, end);
  const n = days.length;

  const base = request.base_currency;
  const rates = new Map<string, Float64Array>();
  const rateOf = (currency: string, loc: Loc): Float64Array => {
    let r = rates.get(currency);
    if (r) return r;
    if (currency === base) r = new Float64Array(n).fill(1);
    else {
      const series = fx.get(currency);
      if (!series) throw new UnknownValue(loc, `no exchange rate from ${currency} to ${base}`);
      r = new Float64Array(n);
      carried(series, r, first);
      for (let t = 0; t < n; t++)
        if (Number.isNaN(r[t]!)) throw new UnknownValue(loc, `no exchange rate from ${currency} to ${base} on or before the period's first day`);
    }
    rates.set(currency, r);
    return r;
  };

  // Only on a day a rate converts something: an old rate of a currency no longer held is harmless.
  const fresh = (currency: string, t: number, loc: Loc): void => {
    if (!ages || currency === base) return;
    for (const leg of ages.legs.get(currency) ?? []) {
      const used = leg.published[first + t]!;
      if (days[t]! - used > ages.maxAgeDays) {
        const pair = `${currency}/${base}`;
        const forPair = pair === `${FX_BASE}/${leg.currency}` ? '' : ` (for ${pair})`;
        throw new UnknownValue(
          loc,
          `${FX_BASE}/${leg.currency} rate of ${formatDay(used)} is older than ${ages.maxAgeDays} days on ${formatDay(days[t]!)}${forPair}`,
        );
      }
    }
  };

  const priceIndex = new Map(prices.isins.map((isin, i) => [isin, i]));
  const columnOf = new Map<string, number>();
  const unitValues: Float64Array[] = [];
  const isCash: boolean[] = [];
  const currencyOf: string[] = [];
  const column = (key: string, loc: Loc): number => {
    const known = columnOf.get(key);
    if (known !== undefined) return known;
    let values: Float64Array;
    if (key.startsWith('$')) {
      const currency = key.slice(1);
      if (!CURRENCY.test(currency)) throw new InvalidValue(loc, 'cash is held as $ and a currency code ($EUR)');
      values = rateOf(currency, loc);
    } else {
      const i = priceIndex.get(key);
      if (i === undefined) throw new UnknownValue(loc, `no prices for instrument ${key}`);
      const rate = rateOf(prices.currencies[i]!, loc);
      values = new Float64Array(n);
      carried(prices.closes[i]!, values, first);
      for (let t = 0; t < n; t++) values[t]! *= rate[t]!;
    }
    columnOf.set(key, unitValues.length);
    unitValues.push(values);
    isCash.push(key.startsWith('$'));
    currencyOf.push(key.startsWith('$') ? key.slice(1) : prices.currencies[priceIndex.get(key)!]!);
    return unitValues.length - 1;
  };

  // Columns first (their count sizes the units), then the units of each version.
  const parsed = request.versions.map((version, v) => {
    const vday = dayOfTimestamp(version.from, ['versions', v, 'from']);
    if (v > 0 && Date.parse(version.from) < Date.parse(request.versions[v - 1]!.from))
      throw new InvalidValue(['versions', v, 'from'], 'versions must be sorted by from');
    const held = Object.keys(version.holdings).map((key) => {
      const loc = ['versions', v, 'holdings', key];
      return [column(key, loc), decimal(version.holdings[key]!, loc), loc] as const;
    });
    return { vday, held };
  });
  let model: Timeline['model'];
  if (request.model) {
    const keys = Object.keys(request.model.weights);
    const weights = Float64Array.from(keys, (k) => request.model!.weights[k]!);
    const columns = Int32Array.from(keys, (k) => column(k, ['model', 'weights', k]));
    const cashWeight = request.model.cash_weight;
    const total = weights.reduce((a, b) => a + b, cashWeight);
    if (weights.some((w) => !(w >= 0)) || !(cashWeight >= 0) || Math.abs(total - 1) > 1e-9) {
      throw new InvalidValue(['model'], 'weights and cash_weight must be at least 0 and sum to 1');
    }
    keys.forEach((k, j) => {
      if (weights[j]! > 0 && Number.isNaN(unitValues[columns[j]!]![0]!))
        throw new UnknownValue(['model', 'weights', k], `no price on or before ${request.from}`);
    });
    keys.forEach((k, j) => {
      if (weights[j]! > 0) for (let t = 0; t < n; t++) fresh(currencyOf[columns[j]!]!, t, ['model', 'weights', k]);
    });
    model = { columns, weights, cashWeight };
  }

  const width = unitValues.length;
  const units = new Float64Array(parsed.length * width);
  parsed.forEach(({ held }, v) => held.forEach(([c, amount]) => (units[v * width + c] = amount)));
  const versionOf = new Int32Array(n);
  for (let t = 0, v = -1; t < n; t++) {
    const before = v;
    while (v + 1 < parsed.length && parsed[v + 1]!.vday <= days[t]!) v++;
    versionOf[t] = v;
    for (const [c, amount, loc] of parsed[v]?.held ?? []) if (amount !== 0) fresh(currencyOf[c]!, t, loc);
    // A close, once there, is carried on: checking the day a version comes into force is enough.
    if (v !== before && (t === 0 || v >= 0)) {
      for (const [c, amount, loc] of parsed[v]?.held ?? []) {
        if (amount !== 0 && Number.isNaN(unitValues[c]![t]!)) throw new UnknownValue(loc, `no price on or before ${formatDay(days[t]!)}`);
      }
    }
  }

  // A flow counts on the first business day on or after its own; one on or before the first day
  // is in that day's value already, one after the last is outside the period.
  const flows = new Float64Array(n);
  request.flows.forEach((flow, f) => {
    const fday = dayOfTimestamp(flow.at, ['flows', f, 'at']);
    const amount = decimal(flow.amount, ['flows', f, 'amount']);
    if (!CURRENCY.test(flow.currency)) throw new InvalidValue(['flows', f, 'currency'], 'must be a currency code (EUR)');
    const rate = rateOf(flow.currency, ['flows', f, 'currency']);
    if (fday <= days[0]! || fday > days[n - 1]!) return;
    let lo = 1;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (days[mid]! < fday) lo = mid + 1;
      else hi = mid;
    }
    fresh(flow.currency, lo, ['flows', f, 'currency']);
    flows[lo]! += amount * rate[lo]!;
  });
  return { days, offset: first, unitValues, isCash, units, versionOf, flows, model };
}
