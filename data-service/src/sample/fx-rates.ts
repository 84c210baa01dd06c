// The sample's exchange rates: a seeded random walk per currency of the catalogue, as the ECB
// publishes them (units per 1 EUR, docs/adr/0057-fx-rates.md).
import type { DuckDBConnection } from '@duckdb/node-api';
import { COUNTRIES } from './catalogue.ts';
import { sqlValues } from './sql-values.ts';

/**
 * Daily volatility of each currency against EUR, as markets show it: about 0.5 % for the majors,
 * less for pegged or managed ones (HKD, CNY), more for emerging ones. Others: 0.5 %.
 */
const DAILY_VOLATILITY: Record<string, number> = { HKD: 0.004, CNY: 0.003, CHF: 0.004, SGD: 0.0035, BRL: 0.01, ZAR: 0.01, MXN: 0.009, INR: 0.004 };

/** One row per catalogue currency but EUR: its level in units per EUR (from the catalogue's USD per unit) and volatility. */
export function sampleCurrencies(): { currency: string; perEur: number; volatility: number }[] {
  const eurUsd = COUNTRIES.find((c) => c.currency === 'EUR')!.usd;
  const seen = new Map<string, { currency: string; perEur: number; volatility: number }>();
  for (const c of COUNTRIES)
    if (c.currency !== 'EUR' && !seen.has(c.currency))
      seen.set(c.currency, { currency: c.currency, perEur: eurUsd / c.usd, volatility: DAILY_VOLATILITY[c.currency] ?? 0.005 });
  return [...seen.values()];
}

/**
 * Fills fx_rates over the sample's business days (`days`: a table of t, date): a geometric random
 * walk per currency with the seeded normal draws of `nrm`, centred so that the walk ends near the
 * catalogue's level whatever the seed, and rounded to six significant digits as the ECB's are.
 */
export async function generateFxRates(conn: DuckDBConnection, days: string): Promise<number> {
  const rows = sampleCurrencies().map((c, k) => [c.currency, k + 1, Math.log(c.perEur), c.volatility]);
  await conn.run(`create temp table sample_currencies as select * from ${sqlValues('c', ['currency', 'k', 'ln_level', 'vol'], rows)}`);
  await conn.run(`insert into fx_rates
    select currency, date, round(r, greatest(0, 5 - floor(log10(r))::integer))::decimal(20, 10)
    from (
      select c.currency, d.date,
        exp(c.ln_level + c.vol * sum(w.z) over (partition by c.k order by w.t rows between unbounded preceding and current row)) as r
      from sample_currencies c
      join (select k, t, z - avg(z) over (partition by k) as z from (select k, t, nrm('fx', k, t) as z from sample_currencies, ${days})) w using (k)
      join ${days} d using (t)
    )
    order by currency, date`);
  await conn.run('drop table sample_currencies');
  return Number((await conn.runAndReadAll('select count(*) from fx_rates')).getRows()[0]![0]);
}
