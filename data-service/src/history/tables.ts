// The closes and rates the history calculator reads (docs/adr/0058-portfolio-history.md), from the
// reference data: one query for the closes, one (cached, fx/store.ts) for the rates.
import { resultToRecordBatch } from '../arrow/duckdb-chunks.ts';
import { FX_BASE } from '../fx/convert.ts';
import type { FxSeriesReader } from '../fx/store.ts';
import { formatDay, parseDay } from '../simulation/dates.ts';
import type { DuckStore } from '../store/duckdb.ts';
import { SqlParams } from '../store/params.ts';
import type { FxLeg, FxTable, HistoryRequest, PriceTable } from './input.ts';

/**
 * Days the calendar starts before `from`: a close or rate of the last weekday before the period is
 * on it. Older closes are carried onto the calendar's first day by the query itself.
 */
const LEAD_DAYS = 7;

const PRICE_COLUMNS = [{ name: 'k' }, { name: 'day' }, { name: 'close' }, { name: 'carried' }];

/** Weekdays from `first` to `last` (days since 1970-01-01); 1970-01-01 was a Thursday. */
export function weekdays(first: number, last: number): Int32Array {
  const days: number[] = [];
  for (let d = first; d <= last; d++) if ((d + 4) % 7 !== 0 && (d + 4) % 7 !== 6) days.push(d);
  return Int32Array.from(days);
}

/** The instruments and currencies a request names: held, in the model, or moved by a flow. */
export function namedInRequest(request: HistoryRequest): { isins: string[]; currencies: string[] } {
  const isins = new Set<string>();
  const currencies = new Set<string>();
  const add = (key: string) => (key.startsWith('$') ? currencies.add(key.slice(1)) : isins.add(key));
  for (const version of request.versions) for (const key of Object.keys(version.holdings)) add(key);
  for (const key of Object.keys(request.model?.weights ?? {})) add(key);
  for (const flow of request.flows) currencies.add(flow.currency);
  return { isins: [...isins].sort(), currencies: [...currencies].sort() };
}

/**
 * The price table of `isins` on the weekdays from a week before `from` to `to`: one business-day
 * calendar for every market (a holiday of one has no close, and the calculator carries the last one
 * on). An instrument's last close before the calendar is put on its first day. An ISIN without any
 * close up to `to` is left out: the calculator refuses it where the request names it.
 */
export async function readPriceTable(duck: DuckStore, isins: readonly string[], range: { from: string; to: string }): Promise<PriceTable> {
  const days = weekdays(parseDay(range.from)! - LEAD_DAYS, parseDay(range.to)!);
  if (isins.length === 0 || days.length === 0) return { days, isins: [], currencies: [], closes: [] };
  const first = formatDay(days[0]!);
  const { read, currencyOf, lastClose } = await duck.use(async ({ conn, ref }) => {
    const p = new SqlParams();
    const wanted = p.textList(isins);
    const start = p.text(first);
    const end = p.text(range.to);
    // Numbers only, the ISIN as its place in the list, read from DuckDB's vectors as typed arrays
    // (arrow/duckdb-chunks.ts): converting 50,000 rows value by value into JavaScript cost more
    // than the query (bench/history.ts).
    const sql = `with wanted as (select unnest(${wanted}) as isin),
      inside as (
        select p.isin, (p.date - date '1970-01-01')::integer as day, p.close::double as close, 0 as carried
        from ${ref}.prices p join wanted using (isin) where p.date between ${start}::date and ${end}::date and p.close > 0),
      before as (
        select p.isin, (${start}::date - date '1970-01-01')::integer as day, arg_max(p.close, p.date)::double as close, 1 as carried
        from ${ref}.prices p join wanted using (isin) where p.date < ${start}::date and p.close > 0 group by p.isin)
      select list_position(${wanted}, c.isin)::integer as k, c.day, c.close, c.carried::integer as carried
      from (select * from inside union all select * from before) c`;
    const batch = await resultToRecordBatch(await conn.stream(sql, p.values, p.types), PRICE_COLUMNS);
    const q = new SqlParams();
    const currencies = (
      await conn.runAndReadAll(`select isin, currency from ${ref}.instruments where isin in (select unnest(${q.textList(isins)}))`, q.values, q.types)
    ).getRows();
    const last = (await conn.runAndReadAll(`select (max(date) - date '1970-01-01')::integer from ${ref}.prices`)).getRows()[0]?.[0];
    return {
      read: PRICE_COLUMNS.map((_, c) => batch.getChildAt(c)!.toArray() as Int32Array | Float64Array),
      currencyOf: new Map(currencies.map(([isin, currency]) => [String(isin), String(currency)])),
      lastClose: last === null || last === undefined ? undefined : Number(last),
    };
  });
  // The calendar's place of each day from its first, -1 for a weekend.
  const position = new Int32Array(days[days.length - 1]! - days[0]! + 1).fill(-1);
  days.forEach((day, k) => (position[day - days[0]!] = k));
  const columns = new Map<string, { currency: string; closes: Float64Array }>();
  const [places, closeDays, closes, carriedFlags] = read as [Int32Array, Int32Array, Float64Array, Int32Array];
  for (let r = 0; r < places.length; r++) {
    const key = isins[places[r]! - 1]!;
    const currency = currencyOf.get(key);
    if (currency === undefined) continue; // not an instrument of the reference data
    let column = columns.get(key);
    if (!column) columns.set(key, (column = { currency, closes: new Float64Array(days.length).fill(NaN) }));
    const k = position[closeDays[r]! - days[0]!] ?? -1;
    // A close on a weekend is not on the calendar; a carried close never overwrites the day's own.
    if (k < 0 || (carriedFlags[r] === 1 && !Number.isNaN(column.closes[k]!))) continue;
    column.closes[k] = closes[r]!;
  }
  const held = [...columns.keys()].sort();
  return { days, isins: held, currencies: held.map((i) => columns.get(i)!.currency), closes: held.map((i) => columns.get(i)!.closes), lastClose };
}

/**
 * The base-currency value of one unit of each of `currencies` on the calendar's days, through EUR
 * (rates are units per 1 EUR): rate(base) / rate(currency). A day without a published rate keeps
 * the last one before it, and `legs` says the day of each leg's rate so that the calculator can
 * refuse one older than the limit; a currency with no rate at all is left out, and the calculator
 * refuses it where the request names it.
 */
export async function readFxTable(
  fx: FxSeriesReader,
  days: Int32Array,
  currencies: readonly string[],
  base: string,
): Promise<{ table: FxTable; legs: Map<string, FxLeg[]> }> {
  const table = new Map<string, Float64Array>();
  const legs = new Map<string, FxLeg[]>();
  const wanted = currencies.filter((c) => c !== base);
  if (wanted.length === 0 || days.length === 0) return { table, legs };
  const rates = await fx([...wanted, base], { from: formatDay(days[0]!), to: formatDay(days[days.length - 1]!) });
  const perUnitEuro = (currency: string): { rate: Float64Array; leg?: FxLeg } | undefined => {
    if (currency === FX_BASE) return { rate: new Float64Array(days.length).fill(1) };
    const published = rates.get(currency);
    if (!published || published.days.length === 0) return undefined;
    const series = new Float64Array(days.length).fill(NaN);
    const on = new Float64Array(days.length).fill(NaN);
    let next = 0;
    for (let k = 0; k < days.length; k++) {
      while (next < published.days.length && published.days[next]! <= days[k]!) next++;
      if (next === 0) continue;
      series[k] = published.perEuro[next - 1]!;
      on[k] = published.days[next - 1]!;
    }
    return { rate: series, leg: { currency, published: on } };
  };
  const baseRate = perUnitEuro(base);
  if (!baseRate) return { table, legs };
  for (const currency of wanted) {
    const euro = perUnitEuro(currency);
    if (!euro) continue;
    table.set(
      currency,
      euro.rate.map((r, k) => baseRate.rate[k]! / r),
    );
    legs.set(
      currency,
      [euro.leg, baseRate.leg].filter((leg): leg is FxLeg => leg !== undefined),
    );
  }
  return { table, legs };
}
