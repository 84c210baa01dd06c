import type { CommonCloses } from './history.ts';
import type { DuckStore } from '../store/duckdb.ts';

/**
 * The positive closes of `isins` in the reference data on the dates where every one of them has
 * one, oldest first, and how many closes each has in all. One query per call: the closes of the
 * instruments joined on the date.
 */
export async function commonCloses(duck: DuckStore, isins: readonly string[]): Promise<CommonCloses> {
  const distinct = [...new Set(isins)];
  const column = (isin: string) => distinct.indexOf(isin);
  return duck.use(async ({ conn, ref }) => {
    const params = distinct.map((isin, i) => [`$${i + 1}`, isin] as const);
    const counted = await conn.runAndReadAll(
      `select isin, count(*) from ${ref}.prices where close > 0 and isin in (${params.map(([p]) => p).join(', ')}) group by isin`,
      distinct,
    );
    const counts = new Map(counted.getRows().map(([isin, n]) => [String(isin), Number(n)]));
    const available = isins.map((isin) => counts.get(isin) ?? 0);
    if (available.some((n) => n === 0)) return { days: new Int32Array(0), closes: isins.map(() => new Float64Array(0)), available };

    const selects = distinct.map((_, i) => `p${i}.close`).join(', ');
    const joins = distinct
      .slice(1)
      .map((_, k) => `join ${ref}.prices p${k + 1} on p${k + 1}.date = p0.date and p${k + 1}.isin = $${k + 2} and p${k + 1}.close > 0`)
      .join(' ');
    const rows = (
      await conn.runAndReadAll(
        `select (p0.date - date '1970-01-01')::integer, ${selects} from ${ref}.prices p0 ${joins} where p0.isin = $1 and p0.close > 0 order by p0.date`,
        distinct,
      )
    ).getRows();
    const days = Int32Array.from(rows, (row) => Number(row[0]));
    const closes = isins.map((isin) => Float64Array.from(rows, (row) => Number(row[1 + column(isin)])));
    return { days, closes, available };
  });
}

/** The currency each of `isins` is priced in, per the reference data (undefined: unknown instrument or no currency). */
export async function instrumentCurrencies(duck: DuckStore, isins: readonly string[]): Promise<(string | undefined)[]> {
  const distinct = [...new Set(isins)];
  return duck.use(async ({ conn, ref }) => {
    const params = distinct.map((_, i) => `$${i + 1}`).join(', ');
    const rows = (await conn.runAndReadAll(`select isin, currency from ${ref}.instruments where isin in (${params})`, distinct)).getRows();
    const byIsin = new Map(rows.filter(([, c]) => c !== null).map(([isin, c]) => [String(isin), String(c)]));
    return isins.map((isin) => byIsin.get(isin));
  });
}
