/**
 * Holdings valued with the data service's prices: an ISIN's quantity times its PRICE (in the
 * instrument's CURRENCY), cash (`$USD`) at face value, then each value in the portfolio's base
 * currency at the reference rate as of the price's date (the latest rate on or before it, no
 * older than the data service's own bound, docs/adr/0057-fx-rates.md). A value without a rate is
 * said to be so, never converted at 1: the row and the total name the missing pair. Pure.
 */
export type Instrument = { name?: string | null; price?: number | null; currency?: string | null; price_date?: string | null };
/** One published rate: units of the quoted currency per 1 unit of the base currency. */
export type RatePoint = { date: string; rate: number };
/** The series of `base/currency` by currency, as GET /data/fx-rates/{base}/{currency} gives them (any order). */
export type RatesByCurrency = Record<string, readonly RatePoint[] | undefined>;
export type UsedRate = { pair: string; date: string; rate: number };
export type HoldingRow = {
  key: string;
  name: string;
  quantity: number;
  price?: number;
  currency?: string;
  /** In the row's own currency. */
  value?: number;
  /** In the base currency: the value itself in the base currency, else through `rate`. */
  baseValue?: number;
  /** The rate `baseValue` was converted with (none in the base currency). */
  rate?: UsedRate;
  /** The pair whose rate is missing ("EUR/USD"), when the value could not be converted. */
  missingRate?: string;
  cash: boolean;
};
export type Conversion = { base: string; rates: RatesByCurrency; asOf: string; maxAgeDays?: number };
export type Valuation = {
  rows: HoldingRow[];
  /** Per currency, in each currency (what is priced). */
  totals: Record<string, number>;
  /** In the base currency, of the rows converted; only with a conversion. */
  total?: number;
  /** The pairs without a rate: the total leaves their rows out and says so. */
  missing: string[];
};

/** Matches the data service's FX_MAX_AGE_DAYS default: a long weekend plus a holiday. */
export const MAX_RATE_AGE_DAYS = 5;
const DAY_MS = 86_400_000;

/** The latest rate on or before `date`, no more than `maxAgeDays` before it; undefined when there is none. */
export function rateAsOf(points: readonly RatePoint[] | undefined, date: string, maxAgeDays = MAX_RATE_AGE_DAYS): RatePoint | undefined {
  let best: RatePoint | undefined;
  for (const point of points ?? []) if (point.date <= date && (!best || point.date > best.date) && point.rate > 0) best = point;
  if (!best) return undefined;
  const age = (Date.parse(`${date}T00:00:00Z`) - Date.parse(`${best.date}T00:00:00Z`)) / DAY_MS;
  return age <= maxAgeDays ? best : undefined;
}

/** The currencies other than `base` that `holdings` need a rate of, with the dates their values are as of. */
export function currenciesToConvert(holdings: Record<string, number>, instruments: Record<string, Instrument>, base: string): string[] {
  const found = new Set<string>();
  for (const key of Object.keys(holdings)) {
    const currency = key.startsWith('$') ? key.slice(1) : instruments[key]?.currency;
    if (currency && currency !== base) found.add(currency);
  }
  return [...found].sort();
}

export function valueHoldings(holdings: Record<string, number>, instruments: Record<string, Instrument>, conversion?: Conversion): Valuation {
  const totals: Record<string, number> = {};
  const missing = new Set<string>();
  let total = 0;
  const convert = (row: HoldingRow, date: string): HoldingRow => {
    if (!conversion || row.value === undefined || !row.currency) return row;
    if (row.currency === conversion.base) {
      total += row.value;
      return { ...row, baseValue: row.value };
    }
    const pair = `${conversion.base}/${row.currency}`;
    const point = rateAsOf(conversion.rates[row.currency], date, conversion.maxAgeDays);
    if (!point) {
      missing.add(pair);
      return { ...row, missingRate: pair };
    }
    const baseValue = row.value / point.rate;
    total += baseValue;
    return { ...row, baseValue, rate: { pair, date: point.date, rate: point.rate } };
  };
  const rows = Object.entries(holdings).map(([key, quantity]): HoldingRow => {
    if (key.startsWith('$')) {
      const currency = key.slice(1);
      totals[currency] = (totals[currency] ?? 0) + quantity;
      return convert({ key, name: `Cash (${currency})`, quantity, price: 1, currency, value: quantity, cash: true }, conversion?.asOf ?? '');
    }
    const instrument = instruments[key];
    const price = typeof instrument?.price === 'number' ? instrument.price : undefined;
    const currency = instrument?.currency ?? undefined;
    const value = price === undefined ? undefined : price * quantity;
    if (value !== undefined && currency) totals[currency] = (totals[currency] ?? 0) + value;
    return convert({ key, name: instrument?.name ?? '', quantity, price, currency, value, cash: false }, instrument?.price_date ?? conversion?.asOf ?? '');
  });
  const order = (row: HoldingRow) => row.baseValue ?? row.value ?? 0;
  rows.sort((a, b) => Number(a.cash) - Number(b.cash) || order(b) - order(a));
  return conversion ? { rows, totals, total, missing: [...missing].sort() } : { rows, totals, missing: [] };
}
