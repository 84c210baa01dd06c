// Reading exchange rates from the attached reference file (docs/adr/0057-fx-rates.md).
import { parseDecimal } from '@platform/shared';
import { resultToRecordBatch } from '../arrow/duckdb-chunks.ts';
import { BoundedCache } from '../store/bounded-cache.ts';
import type { DuckSession, DuckStore } from '../store/duckdb.ts';
import { SqlParams } from '../store/params.ts';
import { FX_BASE, type FxRate, type FxRates } from './convert.ts';

/**
 * The rates of `currencies` (EUR needs none) published from `from` to `to` (YYYY-MM-DD), plus the
 * latest one before `from`, so that `crossRate` can answer for any date of the range, the first
 * included. A currency without any rate is absent from the map.
 */
export type FxReader = (currencies: readonly string[], range: { from: string; to: string }) => Promise<FxRates>;

/** Every currency the reference file has rates of, EUR (the base) included. */
export type FxCurrencies = () => Promise<ReadonlySet<string>>;

/**
 * A currency's rates as binary floats, for the portfolio history's arithmetic: the days of
 * publication (since 1970-01-01, ascending) and units per 1 EUR on each.
 */
export type FxSeries = { days: Int32Array; perEuro: Float64Array };
/** The same rates as `FxReader`, as FxSeries: read from DuckDB's vectors, no decimal parsed. */
export type FxSeriesReader = (currencies: readonly string[], range: { from: string; to: string }) => Promise<ReadonlyMap<string, FxSeries>>;

/** The rates readers and the currencies the reference file has rates of. */
export type FxRatesStore = { read: FxReader; series: FxSeriesReader; currencies: FxCurrencies };

/**
 * Reads rates through the DuckStore session, cached per reference version: rates change only with
 * a new reference file, and the answers for one pair and range are asked for again and again.
 */
export function fxRates(duck: DuckStore, limits = { entries: 1_000, weight: 2_000_000 }): FxRatesStore {
  const known = new BoundedCache<ReadonlySet<string>>({ entries: 1, weight: 1 }, () => 1);
  const read = cachedReader<readonly FxRate[]>(
    duck,
    limits,
    (rates) => rates.length,
    async ({ conn, ref }, wanted, range) => {
      const q = ratesQuery(ref, wanted, range, 'date::varchar as date, rate::varchar as rate');
      const rates = new Map<string, FxRate[]>();
      for (const [currency, date, rate] of (await conn.runAndReadAll(q.sql, q.p.values, q.p.types)).getRows()) {
        const c = String(currency);
        if (!rates.has(c)) rates.set(c, []);
        rates.get(c)!.push({ date: String(date), rate: parseDecimal(String(rate)) });
      }
      return rates;
    },
  );
  const series = cachedReader<FxSeries>(
    duck,
    limits,
    (rates) => rates.days.length,
    async ({ conn, ref }, wanted, range) => {
      // The currency as its place in the list, all columns numbers: copied from the vectors.
      const q = ratesQuery(ref, wanted, range, `(date - date '1970-01-01')::integer as day, rate::double as rate`);
      const sql = `select list_position(${q.list}, currency)::integer as k, day, rate from (${q.sql})`;
      const batch = await resultToRecordBatch(await conn.stream(sql, q.p.values, q.p.types), [{ name: 'k' }, { name: 'day' }, { name: 'rate' }]);
      const [places, days, rates] = [0, 1, 2].map((c) => batch.getChildAt(c)!.toArray()) as [Int32Array, Int32Array, Float64Array];
      const found = new Map<string, FxSeries>();
      for (let r = 0; r < places.length;) {
        let end = r;
        while (end < places.length && places[end] === places[r]) end++;
        found.set(wanted[places[r]! - 1]!, { days: days.slice(r, end), perEuro: rates.slice(r, end) });
        r = end;
      }
      return found;
    },
  );
  const currencies: FxCurrencies = () =>
    duck.use((session) =>
      known.get(session.version, 'all', async () => {
        if (!(await hasRates(session))) return new Set([FX_BASE]);
        const rows = (await session.conn.runAndReadAll(`select distinct currency from ${session.ref}.fx_rates`)).getRows();
        return new Set([FX_BASE, ...rows.map((r) => String(r[0]))]);
      }),
    );
  return { read, series, currencies };
}

/**
 * The rates of `wanted` from the last one on or before `range.from` to `range.to`, ordered by
 * currency and date, with `columns` after the currency; `list` is the parameter of the currencies.
 */
function ratesQuery(ref: string, wanted: readonly string[], range: { from: string; to: string }, columns: string) {
  const p = new SqlParams();
  const list = p.textList(wanted);
  const start = p.text(range.from);
  const end = p.text(range.to);
  const sql = `select currency, ${columns} from ${ref}.fx_rates
    where currency in (select unnest(${list}))
      and date <= ${end}::date
      and date >= coalesce((select max(date) from ${ref}.fx_rates b where b.currency = fx_rates.currency and b.date <= ${start}::date), ${start}::date)
    order by currency, date`;
  return { sql, p, list };
}

/**
 * A reader of rates per currency, each answer cached per reference version, currencies and range;
 * EUR (the base) needs none, and a reference file without rates answers none.
 */
function cachedReader<T>(
  duck: DuckStore,
  limits: { entries: number; weight: number },
  /** The weight of one currency's rates in the cache: how many there are. */
  count: (rates: T) => number,
  load: (session: DuckSession, wanted: string[], range: { from: string; to: string }) => Promise<ReadonlyMap<string, T>>,
): (currencies: readonly string[], range: { from: string; to: string }) => Promise<ReadonlyMap<string, T>> {
  const cache = new BoundedCache<ReadonlyMap<string, T>>(limits, (rates) => [...rates.values()].reduce((n, r) => n + count(r), 1));
  return async (currencies, range) => {
    const wanted = [...new Set(currencies)].filter((c) => c !== FX_BASE).sort();
    if (wanted.length === 0) return new Map();
    return duck.use((session) =>
      cache.get(session.version, `${wanted.join(',')}\n${range.from}\n${range.to}`, async () =>
        (await hasRates(session)) ? load(session, wanted, range) : new Map(),
      ),
    );
  };
}

/** Reference files written before rates were part of them have no fx_rates table: no rates. */
async function hasRates({ conn, ref }: DuckSession): Promise<boolean> {
  const p = new SqlParams();
  const sql = `select count(*) from duckdb_tables() where database_name = ${p.text(ref)} and table_name = 'fx_rates'`;
  return Number((await conn.runAndReadAll(sql, p.values, p.types)).getRows()[0]![0]) > 0;
}
