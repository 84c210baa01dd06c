// The generated sample universe (instruments, prices, factors, exchange rates) that a fresh start or a test loads.
import type { DuckDBConnection } from '@duckdb/node-api';
import { isinCheckDigit } from '../domain/isin.ts';
import { ANALYST_UPSIDE, COUNTRIES, DEMO_CURRENCY, REGIONS, SECTORS, SIZE_BOUNDS } from './catalogue.ts';
import { ETF_PRODUCTS } from './etf-products.ts';
import { generateFxRates } from './fx-rates.ts';
import { sqlValues } from './sql-values.ts';

export type SampleOptions = {
  instruments: number;
  years: number;
  seed: number;
  /** Last business day of the price history (YYYY-MM-DD); default: the last weekday up to today (UTC). */
  endDate?: string;
};

export type SampleSummary = { instruments: number; stocks: number; bonds: number; etfs: number; prices: number; fxRates: number; endDate: string };

/** Weekdays a year: the price history has one close per weekday, and volatilities annualise with it. */
export const BUSINESS_DAYS_PER_YEAR = 261;

/** The last weekday on or before `now` (UTC), as YYYY-MM-DD. */
export function lastWeekday(now = new Date()): string {
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  while (day.getUTCDay() === 0 || day.getUTCDay() === 6) day.setUTCDate(day.getUTCDate() - 1);
  return day.toISOString().slice(0, 10);
}

/** How many stocks, bonds and ETFs a universe of `n` instruments has. */
export function sampleMix(n: number) {
  const etfs = Math.min(Math.max(ETF_PRODUCTS.length, Math.round(n * 0.08)), Math.floor(n / 3));
  const bonds = Math.round(n * 0.03);
  return { stocks: n - etfs - bonds, bonds, etfs };
}

/**
 * Fills a new reference file (tables of schema/reference) with a labelled SAMPLE universe: every
 * name starts with "Sample", ISINs are well-formed with correct check digits, and everything is
 * drawn deterministically from `seed` with hash-based random numbers (DuckDB's random() is not
 * reproducible across threads). Prices follow a factor model (market, sector, region, rates,
 * credit, commodity factors plus idiosyncratic noise), so volatilities and correlations look like
 * markets do. Runs as a handful of set-based SQL statements.
 */
export async function generateSample(conn: DuckDBConnection, options: SampleOptions): Promise<SampleSummary> {
  const { instruments: n, years, seed } = options;
  if (!Number.isInteger(n) || n < 10 || n > 2_000_000) throw new Error('instruments must be an integer from 10 to 2,000,000');
  if (!Number.isInteger(years) || years < 1 || years > 50) throw new Error('years must be an integer from 1 to 50');
  if (!Number.isSafeInteger(seed)) throw new Error('seed must be an integer');
  const endDate = options.endDate ?? lastWeekday();
  if (!/^\d{4}-\d{2}-\d{2}$/.test(endDate) || Number.isNaN(Date.parse(endDate))) throw new Error('endDate must be YYYY-MM-DD');
  const mix = sampleMix(n);
  const width = Math.max(4, String(n).length);
  const run = (sql: string) => conn.run(sql);

  await defineRandomMacros(conn, seed);
  await createCatalogue(conn);

  // Trading days and the daily draws of the common factors: z[1] market, z[2..12] sectors,
  // z[13..16] regions, z[17] rates, z[18] credit, z[19] commodities.
  await run(`create temp table sample_days as
    select (row_number() over (order by d))::integer as t, d::date as date
    from generate_series(date '${endDate}' - interval ${years} year + interval 1 day, date '${endDate}', interval 1 day) g(d)
    where isodow(d) <= 5`);
  // Each factor series is centred on zero over the period, so the realised returns of an asset
  // class follow its drift whatever the seed (one unlucky draw would otherwise give every stock
  // of the universe a decade of +10 % a year).
  await run(`create temp table sample_factors as
    select t, list(z order by k) as z
    from (select t, k, z - avg(z) over (partition by k) as z from (select t, k, nrm('factor', t, k) as z from sample_days, range(1, 20) r(k)))
    group by t`);
  const days = Number((await conn.runAndReadAll('select count(*) from sample_days')).getRows()[0]![0]);

  await run(INSTRUMENTS_TABLE);
  await run(stocksSql(mix.stocks, width, days));
  await run(bondsSql(mix.stocks, mix.bonds, width, endDate));
  await run(etfsSql(mix.stocks + mix.bonds, mix.etfs, width));
  await appendCheckDigits(conn);

  // Geometric returns from the factor model; a close is the start price times the exponential of
  // the cumulative log returns. Drift is the arithmetic mean less half the variance; loadings are
  // annual, scaled to a day once per instrument. The window sorts only integer keys and the return,
  // and `pos` numbers instruments in ISIN order so the table is stored sorted by ISIN and date.
  const dailyScale = Math.sqrt(1 / BUSINESS_DAYS_PER_YEAR);
  await run(`create temp table sample_paths as
    select (row_number() over (order by isin))::integer as pos, i, isin, ln_p0, first_t, ks + 1 as zs, kr + 12 as zr,
      (drift - 0.5 * (lm * lm + ls * ls + lr * lr + lrate * lrate + lcred * lcred + lcom * lcom + lid * lid)) / ${BUSINESS_DAYS_PER_YEAR} as mu,
      lm * ${dailyScale} as am, ls * ${dailyScale} as asec, lr * ${dailyScale} as areg, lrate * ${dailyScale} as arate,
      lcred * ${dailyScale} as acred, lcom * ${dailyScale} as acom, lid * ${dailyScale} as aid
    from sample_instruments`);
  await run(`insert into prices
    select s.isin, d.date, round(exp(s.ln_p0 + w.c), 4)
    from (
      select pos, t, sum(r) over (partition by pos order by t rows between unbounded preceding and current row) as c
      from (
        select s.pos, f.t,
          s.mu + s.am * f.z[1] + s.asec * f.z[s.zs] + s.areg * f.z[s.zr] + s.arate * f.z[17] + s.acred * f.z[18] + s.acom * f.z[19]
            + s.aid * nrm('idio', s.i, f.t) as r
        from sample_paths s join sample_factors f on f.t >= s.first_t
      )
    ) w
    join sample_paths s using (pos)
    join sample_days d using (t)
    order by pos, t`);

  await run(`insert into instruments
    select s.isin, s.name, s.ticker, s.asset_class, s.asset_subclass, s.instrument_type, s.currency, s.country, s.region, s.sector,
      s.exchange, s.market_cap, s.size_label, l.price, l.price_date, s.dividend_yield, s.ter,
      case when s.target_upside is null then null else round(l.price * (1 + s.target_upside), 2) end
    from sample_instruments s
    join (select isin, arg_max(close, date) as price, max(date) as price_date from prices group by isin) l using (isin)
    order by s.isin`);

  await run(factorMetricsSql());
  const fxRates = await generateFxRates(conn, 'sample_days');

  await run(`insert into universes
    select 'GLOBAL', isin from sample_instruments
    union all select 'ROBO', isin from sample_instruments where kind = 'ETF'
    union all select 'DEFAULT', isin from sample_instruments
      where kind = 'ETF' or (kind = 'STOCK' and mcap_usd >= (select median(mcap_usd) from sample_instruments where kind = 'STOCK'))`);

  for (const table of ['sample_paths', 'sample_factors', 'sample_days', 'sample_instruments', 'sample_countries', 'sample_sectors', 'sample_products'])
    await run(`drop table ${table}`);
  const prices = Number((await conn.runAndReadAll('select count(*) from prices')).getRows()[0]![0]);
  return { instruments: n, ...mix, prices, fxRates, endDate };
}

/**
 * uni(salt, x, y): a uniform in (0, 1) from a hash of the seed and the arguments; nrm: a standard
 * normal (Box–Muller on the two halves of one hash); pick: one element of a string or list.
 */
async function defineRandomMacros(conn: DuckDBConnection, seed: number): Promise<void> {
  // DuckDB's hash() of several small values is not well mixed (hash(…, 1) and hash(…, 2) correlate
  // at 0.6); hashing the hash again is, as measured: no bias, no correlation between neighbours.
  await conn.run(`create or replace temp macro rnd(salt, x, y) as hash(hash(${seed}::bigint, salt, x, y))`);
  await conn.run(`create or replace temp macro uni(salt, x, y) as ((rnd(salt, x, y) >> 11)::double + 0.5) / 9007199254740992.0`);
  await conn.run(`create or replace temp macro box_muller(h) as
    sqrt(-2 * ln(((h >> 32)::double + 0.5) / 4294967296.0)) * cos(2 * pi() * ((h & 4294967295)::double + 0.5) / 4294967296.0)`);
  await conn.run(`create or replace temp macro nrm(salt, x, y) as box_muller(rnd(salt, x, y))`);
  await conn.run(`create or replace temp macro pick(salt, x, chars) as chars[1 + (rnd(salt, x, 0) % length(chars))::int]`);
  // Nine alphanumerics: two drawn, seven from a bijection of the instrument number (so unique).
  await conn.run(`create or replace temp macro isin_stem(country, i) as
    country || pick('isin1', i, '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ') || pick('isin2', i, '0123456789')
    || lpad(((i * 7654321 + rnd('isin', 0, 0) % 10000000) % 10000000)::varchar, 7, '0')`);
}

/**
 * Completes the ISINs of sample_instruments with their check digit, computed by the same function
 * that validates ingested ISINs (lambdas over characters in SQL cost ~60 µs a row).
 */
async function appendCheckDigits(conn: DuckDBConnection): Promise<void> {
  const stems = (await conn.runAndReadAll('select i, isin from sample_instruments')).getRows();
  await conn.run('create temp table sample_isins (i bigint, isin varchar)');
  const appender = await conn.createAppender('sample_isins', 'main', 'temp');
  for (const [i, stem] of stems) {
    appender.appendBigInt(i as bigint);
    appender.appendVarchar(`${stem}${isinCheckDigit(String(stem))}`);
    appender.endRow();
  }
  appender.closeSync();
  await conn.run('update sample_instruments s set isin = c.isin from sample_isins c where c.i = s.i');
  await conn.run('drop table sample_isins');
}

async function createCatalogue(conn: DuckDBConnection): Promise<void> {
  const stockCountries = COUNTRIES.filter((c) => c.weight > 0);
  const total = stockCountries.reduce((sum, c) => sum + c.weight, 0);
  let lo = 0;
  const countryRows = COUNTRIES.map((c) => {
    const row = [
      c.code,
      c.currency,
      c.region,
      REGIONS.indexOf(c.region) + 1,
      c.exchanges,
      c.suffix,
      c.usd,
      c.numericTickers,
      c.bonds,
      lo,
      lo + c.weight / total,
    ];
    lo += c.weight / total;
    return row;
  });
  await conn.run(
    `create temp table sample_countries as select * from ${sqlValues('c', ['code', 'currency', 'region', 'kr', 'exchanges', 'suffix', 'usd', 'numeric_tickers', 'bonds', 'lo', 'hi'], countryRows)}`,
  );
  const sectorTotal = SECTORS.reduce((sum, s) => sum + s.weight, 0);
  lo = 0;
  const sectorRows = SECTORS.map((s, k) => {
    const row = [s.name, k + 1, s.beta, s.dividend, s.earningsYield, s.growth, s.roe, lo, lo + s.weight / sectorTotal];
    lo += s.weight / sectorTotal;
    return row;
  });
  await conn.run(
    `create temp table sample_sectors as select * from ${sqlValues('s', ['sector', 'ks', 'beta', 'dividend', 'earnings_yield', 'growth', 'roe', 'lo', 'hi'], sectorRows)}`,
  );
  const productRows = ETF_PRODUCTS.map((p, k) => [
    k,
    p.domiciles.find((d) => COUNTRIES.find((c) => c.code === d)?.currency === DEMO_CURRENCY) ?? null,
    p.assetClass,
    p.subclass,
    p.label,
    p.region,
    p.region === 'GLOBAL' ? 0 : REGIONS.indexOf(p.region) + 1,
    p.domiciles,
    p.sector ? SECTORS.findIndex((s) => s.name === p.sector) + 1 : 0,
    p.market,
    p.regional,
    p.sectorLoading ?? 0,
    p.rates,
    p.credit,
    p.commodity,
    p.idio,
    p.drift,
    p.dividend,
    p.ter[0],
    p.ter[1],
  ]);
  await conn.run(
    `create temp table sample_products as select * from ${sqlValues('p', ['product', 'demo_domicile', 'asset_class', 'asset_subclass', 'label', 'region', 'kr', 'domiciles', 'ks', 'lm', 'lr', 'ls', 'lrate', 'lcred', 'lcom', 'lid', 'drift', 'dividend', 'ter_lo', 'ter_hi'], productRows)}`,
  );
}

/**
 * One row per instrument: its reference values and what the prices and metrics are drawn from.
 * `ks`/`kr` index the sector/region factor (0: none); `l*` are annualised factor loadings.
 */
const INSTRUMENTS_TABLE = `create temp table sample_instruments (
  i bigint, kind varchar, isin varchar, name varchar, ticker varchar, asset_class varchar, asset_subclass varchar, instrument_type varchar,
  currency varchar, country varchar, region varchar, sector varchar, exchange varchar, market_cap double, mcap_usd double,
  size_label varchar, dividend_yield double, ter double, target_upside double,
  ks integer, kr integer, lm double, ls double, lr double, lrate double, lcred double, lcom double, lid double, drift double, ln_p0 double, first_t bigint,
  look_through boolean, value_tilt double, quality double, earnings_yield double, growth_base double, roe double)`;

function stocksSql(count: number, width: number, days: number): string {
  return `insert into sample_instruments by name
    with drawn as (
      select i, uni('country', i, 0) as uc, uni('sector', i, 0) as us,
        least(3e12, greatest(5e7, exp(ln(4e9) + 1.6 * nrm('mcap', i, 0)))) as mcap_usd
      from range(1, ${count + 1}) r(i)
    ), sized as (
      select d.*, c.*, s.sector, s.ks, s.beta, s.dividend, s.earnings_yield, s.growth, s.roe,
        case when mcap_usd >= ${SIZE_BOUNDS.large} then 'LARGE' when mcap_usd >= ${SIZE_BOUNDS.mid} then 'MID' else 'SMALL' end as size_label,
        s.beta * exp(0.15 * nrm('beta', i, 0)) as beta_i
      from drawn d
      join sample_countries c on d.uc >= c.lo and d.uc < c.hi
      join sample_sectors s on d.us >= s.lo and d.us < s.hi
    ), vols as (
      select *, case size_label when 'LARGE' then 0.17 + 0.1 * uni('vol', i, 0) when 'MID' then 0.23 + 0.12 * uni('vol', i, 0)
          else 0.3 + 0.15 * uni('vol', i, 0) end as vol,
        0.12 * beta_i as lm_i, case when region = 'EMERGING_MARKETS' then 0.08 else 0.05 end as lr_i
      from sized
    )
    select i, 'STOCK' as kind, isin_stem(code, i) as isin,
      'Sample Equity ' || lpad(i::varchar, ${width}, '0') || ' ' || suffix as name,
      case when numeric_tickers then (1000 + floor(9000 * uni('tk', i, 0)))::int::varchar
        else pick('tk1', i, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') || pick('tk2', i, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') || pick('tk3', i, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')
          || case when uni('tk-length', i, 0) < 0.6 then pick('tk4', i, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') else '' end end as ticker,
      'EQUITY' as asset_class, case when region = 'EMERGING_MARKETS' then 'EMERGING_EQUITY' else 'DEVELOPED_EQUITY' end as asset_subclass,
      'STOCK' as instrument_type, currency, code as country, region, sector, pick('exchange', i, exchanges) as exchange,
      round(mcap_usd / usd, -3) as market_cap, mcap_usd, size_label,
      case when uni('divpay', i, 0) < case size_label when 'SMALL' then 0.35 else 0.12 end then 0
        else round(dividend * exp(0.35 * nrm('div', i, 0) - 0.06), 4) end as dividend_yield,
      null::double as ter,
      case when uni('cover', i, 0) < case size_label when 'SMALL' then 0.3 else 0.05 end then null else ${targetUpsideSql()} end as target_upside,
      ks, kr, lm_i as lm, 0.07 as ls, lr_i as lr, 0.0 as lrate, 0.0 as lcred, 0.0 as lcom,
      sqrt(greatest(vol ^ 2 - lm_i ^ 2 - 0.07 ^ 2 - lr_i ^ 2, 0.06 ^ 2)) as lid,
      0.02 + 0.05 * beta_i + 0.03 * nrm('drift', i, 0) as drift,
      ln(exp(ln(40) + 0.8 * nrm('p0', i, 0)) / usd) as ln_p0,
      case when uni('listed', i, 0) < 0.05 then 1 + floor(uni('listed-day', i, 0) * ${Math.floor(days * 0.8)})::bigint else 1 end as first_t,
      false as look_through, nrm('style', i, 0) as value_tilt, nrm('quality', i, 0) as quality, earnings_yield, growth as growth_base, roe
    from vols`;
}

/** A covered stock's target upside: the mean of three uniforms spread over ANALYST_UPSIDE (bounded, peaked at +10 %). */
function targetUpsideSql(): string {
  const { min, max } = ANALYST_UPSIDE;
  return `${min} + ${max - min} * (uni('target', i, 1) + uni('target', i, 2) + uni('target', i, 3)) / 3`;
}

function bondsSql(offset: number, count: number, width: number, endDate: string): string {
  const endYear = Number(endDate.slice(0, 4));
  return `insert into sample_instruments by name
    with issuers as (select *, row_number() over (order by code) - 1 as k, count(*) over () as m from sample_countries where bonds),
    drawn as (
      select ${offset} + j as i, j, uni('gov', j, 0) < 0.5 as gov, round(4 * (0.5 + 4 * uni('coupon', j, 0))) / 4 as coupon,
        1 + floor(25 * uni('maturity', j, 0))::int as years_left, uni('issuer', j, 0) as h
      from range(1, ${count + 1}) r(j)
    )
    select i, 'BOND' as kind, isin_stem(c.code, i) as isin,
      'Sample ' || case when gov then 'Government' else 'Corporate' end || ' Bond ' || lpad(j::varchar, ${width}, '0') || ' '
        || printf('%.2f', coupon) || '% ' || (${endYear} + years_left)::varchar as name,
      null as ticker, 'FIXED_INCOME' as asset_class, case when gov then 'GOVERNMENT_BOND' else 'CORPORATE_BOND' end as asset_subclass,
      'BOND' as instrument_type, c.currency, c.code as country, c.region, null as sector, c.exchanges[1] as exchange,
      null as market_cap, null as mcap_usd, null as size_label, null as dividend_yield, null as ter, null as target_upside,
      0 as ks, 0 as kr, case when gov then 0.0 else 0.01 end as lm, 0.0 as ls, 0.0 as lr, 0.02 + 0.0025 * years_left as lrate,
      case when gov then 0.0 else 0.025 end as lcred, 0.0 as lcom, 0.01 as lid, 0.03 as drift, ln(100 * exp(0.05 * nrm('p0', i, 0))) as ln_p0, 1 as first_t
    from drawn d join issuers c on c.k = floor(d.h * c.m)`;
}

function etfsSql(offset: number, count: number, width: number): string {
  return `insert into sample_instruments by name
    with drawn as (
      select ${offset} + j as i, j, (j - 1) % ${ETF_PRODUCTS.length} as product from range(1, ${count + 1}) r(j)
    ), placed as (
      select d.*, p.*, coalesce(case when j <= ${ETF_PRODUCTS.length} then demo_domicile end, pick('domicile', d.i, p.domiciles)) as domicile
      from drawn d join sample_products p using (product)
    )
    select i, 'ETF' as kind, isin_stem(domicile, i) as isin,
      'Sample ' || label || ' ETF ' || lpad(j::varchar, ${width}, '0') || case when dividend > 0 then ' (Dist)' else ' (Acc)' end as name,
      'S' || pick('tk1', i, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') || pick('tk2', i, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') || pick('tk3', i, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') as ticker,
      asset_class, asset_subclass, 'ETF' as instrument_type, c.currency, domicile as country, placed.region,
      null as sector, pick('exchange', i, c.exchanges) as exchange, null as market_cap, null as mcap_usd, null as size_label,
      round(dividend * exp(0.1 * nrm('div', i, 0)), 4) as dividend_yield, round(ter_lo + (ter_hi - ter_lo) * uni('ter', i, 0), 4) as ter,
      null as target_upside, ks, placed.kr, lm, ls, lr, lrate, lcred, lcom, lid, drift,
      case when asset_class = 'CASH' then ln(100) else ln(50) + 0.6 * nrm('p0', i, 0) end as ln_p0, 1 as first_t,
      asset_class in ('EQUITY', 'REAL_ESTATE') as look_through
    from placed join sample_countries c on c.code = domicile`;
}

/**
 * Raw metrics, higher meaning more of the factor: earnings yield (value), earnings growth, 12-1
 * month return (momentum), inverse annualised volatility of the last year (stability), an
 * Altman-Z-like score (financial health), return on equity (profitability), log of the USD market
 * cap (size) and dividend yield. Stocks miss about 4 % of each at random, as vendor data does.
 * Equity and property ETFs carry look-through fundamentals; for other ETFs and bonds only the
 * price-based metrics apply.
 */
function factorMetricsSql(): string {
  const gap = (k: number, expr: string) => `case when kind = 'STOCK' and uni('gap', i, ${k}) < 0.04 then null else ${expr} end`;
  return `insert into factor_metrics
    with recent as (
      select isin, close, ln(close) - lag(ln(close)) over (partition by isin order by date) as lr,
        row_number() over (partition by isin order by date desc) as back
      from prices where date > (select max(date) from prices) - interval 400 day
    ), priced as (
      select isin,
        max(close) filter (where back = 22) / max(close) filter (where back = 262) - 1 as momentum,
        case when count(lr) filter (where back <= ${BUSINESS_DAYS_PER_YEAR}) >= 60
          then 1 / (stddev_samp(lr) filter (where back <= ${BUSINESS_DAYS_PER_YEAR}) * sqrt(${BUSINESS_DAYS_PER_YEAR})) end as stability
      from recent group by isin
    )
    select s.isin,
      ${gap(
        1,
        `case when kind = 'STOCK' then round(earnings_yield + 0.02 * value_tilt + 0.015 * nrm('value', i, 0), 4)
        when look_through then round(0.055 + 0.005 * nrm('value', i, 0), 4) end`,
      )},
      ${gap(
        2,
        `case when kind = 'STOCK' then round(growth_base - 0.03 * value_tilt + 0.06 * nrm('growth', i, 0), 4)
        when look_through then round(0.07 + 0.01 * nrm('growth', i, 0), 4) end`,
      )},
      ${gap(3, 'round(p.momentum, 4)')},
      ${gap(4, 'round(p.stability, 4)')},
      ${gap(
        5,
        `case when kind = 'STOCK' then round(exp(ln(2.5) + 0.35 * quality + 0.4 * nrm('health', i, 0)), 3)
        when look_through then round(exp(ln(3) + 0.1 * nrm('health', i, 0)), 3) end`,
      )},
      ${gap(
        6,
        `case when kind = 'STOCK' then round(roe + 0.05 * quality + 0.04 * nrm('roe', i, 0), 4)
        when look_through then round(0.15 + 0.02 * nrm('roe', i, 0), 4) end`,
      )},
      ${gap(7, `case when kind = 'STOCK' then round(ln(mcap_usd), 4) when look_through then round(ln(8e10) + 0.5 * nrm('size', i, 0), 4) end`)},
      ${gap(8, `case when kind = 'BOND' or asset_class = 'COMMODITY' then null else dividend_yield end`)}
    from sample_instruments s left join priced p using (isin)
    order by s.isin`;
}
