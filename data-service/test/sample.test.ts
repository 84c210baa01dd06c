import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { testWorkDir } from '@platform/test-support/database';
import { isinProblem } from '../src/domain/isin.ts';
import { ANALYST_UPSIDE, COUNTRIES, DEMO_CURRENCY } from '../src/sample/catalogue.ts';
import { ETF_PRODUCTS } from '../src/sample/etf-products.ts';
import { sampleCurrencies } from '../src/sample/fx-rates.ts';
import { BUSINESS_DAYS_PER_YEAR, generateSample, lastWeekday, sampleMix } from '../src/sample/generate.ts';
import { applySchema } from '../src/store/schema.ts';
import { buildReferenceFile } from '../src/store/reference-files.ts';

const OPTIONS = { instruments: 300, years: 2, seed: 7, endDate: '2026-11-20' };
type Row = Record<string, unknown>;

async function inMemorySample(options: typeof OPTIONS) {
  const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const conn = await instance.connect();
  await applySchema(conn, 'reference');
  await generateSample(conn, options);
  return { conn, close: () => (conn.closeSync(), instance.closeSync()) };
}

describe('sample universe', function () {
  this.timeout(120_000);
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;
  const rows = async (sql: string): Promise<Row[]> => (await conn.runAndReadAll(sql)).getRowObjectsJson() as Row[];
  const one = async (sql: string) => (await rows(sql))[0]!;

  before(async () => {
    const dir = await mkdtemp(join(testWorkDir(), 'sample-'));
    const file = await buildReferenceFile(dir, 'sample', (c) => generateSample(c, OPTIONS));
    instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
    conn = await instance.connect();
  });
  after(() => {
    conn?.closeSync();
    instance?.closeSync();
  });

  it('labels every instrument as a sample, with a valid ISIN of its country and the currency of that country', async () => {
    const all = await rows('select isin, name, country, currency, region from instruments');
    assert.equal(all.length, 300);
    assert.equal(new Set(all.map((r) => r.isin)).size, 300);
    for (const r of all) {
      assert.equal(isinProblem(String(r.isin)), undefined, String(r.isin));
      assert.equal(String(r.isin).slice(0, 2), r.country);
      assert.match(String(r.name), /^Sample /);
      const country = COUNTRIES.find((c) => c.code === r.country)!;
      assert.equal(r.currency, country.currency, `${r.isin} ${r.country}`);
    }
    assert.deepEqual(new Set(all.map((r) => r.region)), new Set(['NORTH_AMERICA', 'EUROPE', 'ASIA_PACIFIC', 'EMERGING_MARKETS', 'GLOBAL']));
  });

  it('mixes stocks, bonds and ETFs of every asset class; TER only on ETFs, size labels by market cap', async () => {
    const mix = sampleMix(300);
    const types = await rows(`select instrument_type, count(*)::int as n from instruments group by 1`);
    assert.deepEqual(Object.fromEntries(types.map((r) => [r.instrument_type, r.n])), { STOCK: mix.stocks, BOND: mix.bonds, ETF: mix.etfs });
    const etfClasses = await rows(`select distinct asset_class from instruments where instrument_type = 'ETF' order by 1`);
    assert.deepEqual(
      etfClasses.map((r) => r.asset_class),
      ['CASH', 'COMMODITY', 'EQUITY', 'FIXED_INCOME', 'REAL_ESTATE'],
    );
    assert.deepEqual(
      await one(`select count(*) filter (where ter is null and instrument_type = 'ETF')::int as etf_missing,
      count(*) filter (where ter is not null and instrument_type <> 'ETF')::int as others_with_ter from instruments`),
      { etf_missing: 0, others_with_ter: 0 },
    );
    const stocks = await rows(`select country, market_cap, size_label, sector, analyst_target_price from instruments where instrument_type = 'STOCK'`);
    for (const s of stocks) {
      const usd = Number(s.market_cap) * COUNTRIES.find((c) => c.code === s.country)!.usd;
      const expected = usd >= 10e9 * 1.001 ? 'LARGE' : usd >= 2e9 * 1.001 ? 'MID' : usd < 2e9 * 0.999 ? 'SMALL' : s.size_label;
      assert.equal(s.size_label, expected);
      assert.ok(s.sector);
    }
    assert.deepEqual(new Set(stocks.map((s) => s.size_label)), new Set(['LARGE', 'MID', 'SMALL']));
    const targets = stocks.filter((s) => s.analyst_target_price !== null).length;
    assert.ok(targets > 0.6 * stocks.length && targets < stocks.length, `${targets} target prices`);
  });

  it('gives covered stocks analyst targets from 30 % below to 50 % above their price, a quarter of them below; none for bonds and ETFs', async () => {
    const all = await rows(`select instrument_type, price::double as price, analyst_target_price::double as target from instruments`);
    assert.deepEqual(
      all.filter((r) => r.target !== null && r.instrument_type !== 'STOCK'),
      [],
    );
    const upsides = all.filter((r) => r.target !== null).map((r) => ({ upside: Number(r.target) / Number(r.price) - 1, price: Number(r.price) }));
    for (const { upside, price } of upsides) {
      // Targets are rounded to cents.
      const slack = 0.005 / price + 1e-9;
      assert.ok(upside >= ANALYST_UPSIDE.min - slack && upside <= ANALYST_UPSIDE.max + slack, `upside ${upside} at price ${price}`);
    }
    const below = upsides.filter((u) => u.upside < 0).length;
    const above = upsides.filter((u) => u.upside > 0).length;
    assert.ok(below > 0.1 * upsides.length && below < 0.4 * upsides.length, `${below} of ${upsides.length} targets below the price`);
    assert.ok(above > 0.5 * upsides.length, `${above} of ${upsides.length} targets above the price`);
    const mean = upsides.reduce((a, u) => a + u.upside, 0) / upsides.length;
    assert.ok(mean > 0.05 && mean < 0.15, `mean upside ${mean}`);
  });

  it("lists an ETF of every product that has a euro domicile in EUR, the demo portfolios' currency", async () => {
    const priced = await rows(`select distinct regexp_extract(name, '^Sample (.*) ETF', 1) as label from instruments
      where instrument_type = 'ETF' and currency = '${DEMO_CURRENCY}' and price > 0`);
    const euroDomiciles = new Set(COUNTRIES.filter((c) => c.currency === DEMO_CURRENCY).map((c) => c.code));
    const expected = ETF_PRODUCTS.filter((p) => p.domiciles.some((d) => euroDomiciles.has(d))).map((p) => p.label);
    assert.ok(expected.length >= 15, `${expected.length} products with a euro domicile`);
    assert.deepEqual(priced.map((r) => r.label).sort(), [...expected].sort());
  });

  it('has one close per weekday, and an instrument price that is its last close', async () => {
    const days = await one(
      `select count(distinct date)::int as n, count(*) filter (where isodow(date) > 5)::int as weekend, max(date)::varchar as last from prices`,
    );
    assert.equal(days.weekend, 0);
    assert.equal(days.last, OPTIONS.endDate);
    assert.ok(Math.abs(Number(days.n) - 2 * BUSINESS_DAYS_PER_YEAR) <= 2, `${days.n} days`);
    const full = await one(`select count(*)::int as n from (select isin from prices group by isin having count(*) = ${days.n})`);
    assert.ok(Number(full.n) > 0.9 * 300 && Number(full.n) < 300, `${full.n} instruments with the full history (a few are listed later)`);
    const mismatched = await one(`select count(*)::int as n from instruments i
      join (select isin, arg_max(close, date) as close, max(date) as date from prices group by isin) l using (isin)
      where round(l.close, 6) <> i.price or l.date <> i.price_date`);
    assert.equal(mismatched.n, 0);
  });

  it('names the universes GLOBAL (all), DEFAULT (the larger stocks and the ETFs) and ROBO (the ETFs)', async () => {
    const sizes = Object.fromEntries((await rows(`select universe_name, count(*)::int as n from universes group by 1`)).map((r) => [r.universe_name, r.n]));
    const mix = sampleMix(300);
    assert.equal(sizes.GLOBAL, 300);
    assert.equal(sizes.ROBO, mix.etfs);
    assert.ok(Math.abs(Number(sizes.DEFAULT) - (Math.ceil(mix.stocks / 2) + mix.etfs)) <= 1, `DEFAULT ${sizes.DEFAULT}`);
    assert.deepEqual(
      await one(`select count(*)::int as n from universes u join instruments i using (isin)
      where u.universe_name = 'ROBO' and i.instrument_type <> 'ETF'`),
      { n: 0 },
    );
  });

  it('has raw metrics for the eight factors, a few missing for stocks, none where a factor does not apply', async () => {
    const stocks = await one(`select count(*)::int as n, ${['value', 'growth', 'momentum', 'stability', 'financial_health', 'profitability', 'size', 'dividend']
      .map((m) => `count(*) filter (where f.${m} is null)::int as ${m}`)
      .join(', ')}
      from factor_metrics f join instruments i using (isin) where i.instrument_type = 'STOCK'`);
    for (const [metric, missing] of Object.entries(stocks)) {
      if (metric === 'n') continue;
      assert.ok(Number(missing) > 0 && Number(missing) <= 0.12 * Number(stocks.n), `${metric}: ${missing} of ${stocks.n} missing`);
    }
    const etfs = await rows(`select i.asset_class, f.* from factor_metrics f join instruments i using (isin) where i.instrument_type = 'ETF'`);
    for (const e of etfs) {
      assert.notEqual(e.momentum, null);
      assert.notEqual(e.stability, null);
      const lookThrough = e.asset_class === 'EQUITY' || e.asset_class === 'REAL_ESTATE';
      for (const m of ['value', 'growth', 'financial_health', 'profitability', 'size'])
        assert.equal(e[m] === null, !lookThrough, `${e.isin} ${e.asset_class} ${m}`);
      assert.equal(e.dividend === null, e.asset_class === 'COMMODITY');
    }
    // Momentum is the 12-1 month return of the generated prices.
    const check = await one(`with p as (select isin, close, row_number() over (partition by isin order by date desc) as back from prices)
      select f.momentum, round(max(close) filter (where back = 22) / max(close) filter (where back = 262) - 1, 4) as computed
      from p join factor_metrics f using (isin) where f.momentum is not null group by f.isin, f.momentum order by f.isin limit 1`);
    assert.equal(check.momentum, check.computed);
  });

  it('has plausible volatilities: stocks by size, bond and money-market ETFs far lower', async () => {
    const vols = await rows(`with r as (select isin, ln(close) - lag(ln(close)) over (partition by isin order by date) as lr from prices)
      select i.instrument_type, i.asset_class, coalesce(i.size_label, i.asset_subclass) as kind,
        avg(v.vol) as avg_vol, min(v.vol) as min_vol, max(v.vol) as max_vol
      from (select isin, stddev_samp(lr) * sqrt(${BUSINESS_DAYS_PER_YEAR}) as vol from r group by isin) v join instruments i using (isin)
      group by all`);
    const find = (type: string, kind: string) => vols.find((v) => v.instrument_type === type && v.kind === kind)!;
    for (const size of ['LARGE', 'MID', 'SMALL']) {
      const v = find('STOCK', size);
      assert.ok(Number(v.min_vol) > 0.12 && Number(v.max_vol) < 0.6, `${size}: ${v.min_vol}–${v.max_vol}`);
    }
    assert.ok(Number(find('STOCK', 'LARGE').avg_vol) < Number(find('STOCK', 'SMALL').avg_vol));
    assert.ok(Number(find('ETF', 'GOVERNMENT_BOND').max_vol) < 0.1);
    assert.ok(Number(find('ETF', 'MONEY_MARKET').max_vol) < 0.02);
  });

  it('correlates stocks of the same sector more than stocks and gold', async () => {
    const corr = await one(`with r as (select isin, date, ln(close) - lag(ln(close)) over (partition by isin order by date) as lr from prices),
      stocks as (select isin, sector from instruments where instrument_type = 'STOCK' and size_label = 'LARGE'),
      gold as (select isin from instruments where asset_subclass = 'PRECIOUS_METALS'),
      pairs as (
        select a.isin as a, b.isin as b, a.sector = b.sector as same from stocks a join stocks b on a.isin < b.isin
        union all select s.isin, g.isin, null from stocks s, gold g
      )
      select avg(c) filter (where same) as same_sector, avg(c) filter (where same is null) as with_gold from (
        select p.same, corr(ra.lr, rb.lr) as c from pairs p join r ra on ra.isin = p.a join r rb on rb.isin = p.b and rb.date = ra.date
        group by p.a, p.b, p.same
      )`);
    assert.ok(Number(corr.same_sector) > 0.25, `same sector ${corr.same_sector}`);
    assert.ok(Math.abs(Number(corr.with_gold)) < 0.1, `with gold ${corr.with_gold}`);
  });

  it('has a EUR rate of every other catalogue currency on every price date, near its catalogue level', async () => {
    const currencies = [...new Set(COUNTRIES.map((c) => c.currency))].filter((c) => c !== 'EUR').sort();
    const have = await rows(`select currency, count(*) as n, min(date)::varchar as first, max(date)::varchar as last,
        arg_max(rate, date)::double as latest, min(rate)::double as low, max(rate)::double as high from fx_rates group by currency order by currency`);
    assert.deepEqual(
      have.map((r) => r.currency),
      currencies,
    );
    const dates = await one(`select count(distinct date) as n, min(date)::varchar as first, max(date)::varchar as last from prices`);
    const eurUsd = COUNTRIES.find((c) => c.currency === 'EUR')!.usd;
    for (const r of have) {
      assert.deepEqual([Number(r.n), r.first, r.last], [Number(dates.n), dates.first, dates.last], String(r.currency));
      const level = eurUsd / COUNTRIES.find((c) => c.currency === r.currency)!.usd;
      // Two years of a walk centred on its level stay within ±40 % of it.
      assert.ok(Number(r.low) > level * 0.6 && Number(r.high) < level / 0.6, `${r.currency}: ${r.low}–${r.high} around ${level}`);
    }
    assert.equal(Number((await one(`select count(*) as n from (select distinct date from fx_rates except select distinct date from prices)`)).n), 0);
  });

  it('moves the majors by about half a percent a day, with six significant digits', async () => {
    const vols = await rows(`select currency, stddev_samp(lr) as vol from (
        select currency, ln(rate::double) - lag(ln(rate::double)) over (partition by currency order by date) as lr from fx_rates
      ) group by currency`);
    for (const major of ['USD', 'GBP', 'JPY', 'AUD', 'CAD']) {
      const vol = Number(vols.find((v) => v.currency === major)!.vol);
      assert.ok(vol > 0.004 && vol < 0.006, `${major}: ${vol}`);
    }
    const expected = new Map(sampleCurrencies().map((c) => [c.currency, c.volatility]));
    for (const v of vols) assert.ok(Math.abs(Number(v.vol) / expected.get(String(v.currency))! - 1) < 0.15, `${v.currency}: ${v.vol}`);
    const digits = await rows(`select rate::varchar as rate from fx_rates where currency in ('USD', 'KRW') order by date desc limit 4`);
    for (const d of digits)
      assert.ok(
        String(d.rate)
          .replace(/^0\.0*|\./g, '')
          .replace(/0+$/, '').length <= 6,
        String(d.rate),
      );
  });

  it('is reproducible from the seed and differs for another seed', async () => {
    const first = async (c: DuckDBConnection) => ({
      instruments: (await c.runAndReadAll('select * from instruments order by isin')).getRowsJson(),
      prices: (await c.runAndReadAll('select * from prices order by isin, date limit 1000')).getRowsJson(),
      metrics: (await c.runAndReadAll('select * from factor_metrics order by isin')).getRowsJson(),
      rates: (await c.runAndReadAll('select * from fx_rates order by currency, date limit 1000')).getRowsJson(),
    });
    const same = await inMemorySample(OPTIONS);
    const other = await inMemorySample({ ...OPTIONS, seed: 8 });
    try {
      const original = await first(conn);
      assert.deepEqual(await first(same.conn), original);
      const different = await first(other.conn);
      assert.notDeepEqual(different.instruments[0], original.instruments[0]);
      assert.notDeepEqual(different.prices.slice(0, 10), original.prices.slice(0, 10));
      assert.notDeepEqual(different.rates.slice(1, 10), original.rates.slice(1, 10));
    } finally {
      same.close();
      other.close();
    }
  });

  it('refuses options it cannot honour, and ends prices on a weekday by default', async () => {
    const { conn: c, close } = await inMemorySample({ ...OPTIONS, instruments: 10, years: 1 });
    try {
      await assert.rejects(generateSample(c, { ...OPTIONS, instruments: 5 }), /instruments/);
      await assert.rejects(generateSample(c, { ...OPTIONS, years: 0 }), /years/);
    } finally {
      close();
    }
    assert.equal(lastWeekday(new Date('2026-11-22T10:00:00Z')), '2026-11-20'); // a Sunday
    assert.equal(lastWeekday(new Date('2026-11-18T23:59:00Z')), '2026-11-18');
  });
});
