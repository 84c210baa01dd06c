// Reading exchange rates from the attached reference file (docs/adr/0057-fx-rates.md).
import { parseDecimal } from '@platform/shared';
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
 * Reads rates through the DuckStore session, cached per reference version: rates change only with
 * a new reference file, and the answers for one pair and range are asked for again and again.
 */
/** The rates reader and the currencies the reference file has rates of. */
export type FxRatesStore = { read: FxReader; currencies: FxCurrencies };

export function fxRates(duck: DuckStore, limits = { entries: 1_000, weight: 2_000_000 }): FxRatesStore {
  const cache = new BoundedCache<FxRates>(limits, (rates) => [...rates.values()].reduce((n, r) => n + r.length, 1));
  const known = new BoundedCache<ReadonlySet<string>>({ entries: 1, weight: 1 }, () => 1);
  const read: FxReader = async (currencies, { from, to }) => {
    const wanted = [...new Set(currencies)].filter((c) => c !== FX_BASE).sort();
    if (wanted.length === 0) return new Map();
    return duck.use((session) =>
      cache.get(session.version, `${wanted.join(',')}\n${from}\n${to}`, async () => {
        if (!(await hasRates(session))) return new Map();
        const p = new SqlParams();
        const list = p.textList(wanted);
        const start = p.text(from);
        const end = p.text(to);
        const sql = `select currency, date::varchar as date, rate::varchar as rate from ${session.ref}.fx_rates
          where currency in (select unnest(${list}))
            and date <= ${end}::date
            and date >= coalesce((select max(date) from ${session.ref}.fx_rates b where b.currency = fx_rates.currency and b.date <= ${start}::date), ${start}::date)
          order by currency, date`;
        const rates = new Map<string, FxRate[]>();
        for (const [currency, date, rate] of (await session.conn.runAndReadAll(sql, p.values, p.types)).getRows()) {
          const c = String(currency);
          if (!rates.has(c)) rates.set(c, []);
          rates.get(c)!.push({ date: String(date), rate: parseDecimal(String(rate)) });
        }
        return rates;
      }),
    );
  };
  const currencies: FxCurrencies = () =>
    duck.use((session) =>
      known.get(session.version, 'all', async () => {
        if (!(await hasRates(session))) return new Set([FX_BASE]);
        const rows = (await session.conn.runAndReadAll(`select distinct currency from ${session.ref}.fx_rates`)).getRows();
        return new Set([FX_BASE, ...rows.map((r) => String(r[0]))]);
      }),
    );
  return { read, currencies };
}

/** Reference files written before rates were part of them have no fx_rates table: no rates. */
async function hasRates({ conn, ref }: DuckSession): Promise<boolean> {
  const p = new SqlParams();
  const sql = `select count(*) from duckdb_tables() where database_name = ${p.text(ref)} and table_name = 'fx_rates'`;
  return Number((await conn.runAndReadAll(sql, p.values, p.types)).getRows()[0]![0]) > 0;
}
