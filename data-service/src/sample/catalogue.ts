// The made-up world the sample universe is drawn from: countries with their currency, region and
// exchanges, GICS-like sectors with typical betas and fundamentals, and ETF products with their
// risk-factor loadings. Loadings are annualised volatilities contributed by each factor.

export const REGIONS = ['NORTH_AMERICA', 'EUROPE', 'ASIA_PACIFIC', 'EMERGING_MARKETS'] as const;

export type Country = {
  code: string;
  currency: string;
  region: (typeof REGIONS)[number];
  exchanges: string[];
  /** Legal form put after stock names. */
  suffix: string;
  /** Share of the listed stocks. */
  weight: number;
  /** US dollars per unit of the currency (market caps are drawn in USD). */
  usd: number;
  /** Local tickers are numbers (Tokyo, Hong Kong, …) rather than letters. */
  numericTickers: boolean;
  /** Issues government and corporate bonds in the sample. */
  bonds: boolean;
};

const c = (
  code: string,
  currency: string,
  region: Country['region'],
  exchanges: string[],
  suffix: string,
  weight: number,
  usd: number,
  numericTickers = false,
  bonds = false,
): Country => ({
  code,
  currency,
  region,
  exchanges,
  suffix,
  weight,
  usd,
  numericTickers,
  bonds,
});

export const COUNTRIES: Country[] = [
  c('US', 'USD', 'NORTH_AMERICA', ['XNYS', 'XNAS'], 'Inc.', 34, 1, false, true),
  c('CA', 'CAD', 'NORTH_AMERICA', ['XTSE'], 'Corp.', 4, 0.73),
  c('GB', 'GBP', 'EUROPE', ['XLON'], 'plc', 6, 1.27, false, true),
  c('DE', 'EUR', 'EUROPE', ['XETR'], 'AG', 5, 1.08, false, true),
  c('FR', 'EUR', 'EUROPE', ['XPAR'], 'SA', 5, 1.08, false, true),
  c('NL', 'EUR', 'EUROPE', ['XAMS'], 'NV', 2, 1.08),
  c('CH', 'CHF', 'EUROPE', ['XSWX'], 'AG', 3, 1.12),
  c('SE', 'SEK', 'EUROPE', ['XSTO'], 'AB', 2, 0.095),
  c('IT', 'EUR', 'EUROPE', ['XMIL'], 'SpA', 2, 1.08, false, true),
  c('ES', 'EUR', 'EUROPE', ['XMAD'], 'SA', 2, 1.08),
  c('JP', 'JPY', 'ASIA_PACIFIC', ['XTKS'], 'KK', 9, 0.0067, true, true),
  c('AU', 'AUD', 'ASIA_PACIFIC', ['XASX'], 'Ltd', 3, 0.66),
  c('HK', 'HKD', 'ASIA_PACIFIC', ['XHKG'], 'Ltd', 3, 0.128, true),
  c('SG', 'SGD', 'ASIA_PACIFIC', ['XSES'], 'Ltd', 1, 0.74),
  c('CN', 'CNY', 'EMERGING_MARKETS', ['XSHG', 'XSHE'], 'Co Ltd', 5, 0.14, true),
  c('IN', 'INR', 'EMERGING_MARKETS', ['XNSE'], 'Ltd', 4, 0.012),
  c('BR', 'BRL', 'EMERGING_MARKETS', ['BVMF'], 'SA', 2, 0.18),
  c('KR', 'KRW', 'EMERGING_MARKETS', ['XKRX'], 'Co Ltd', 2, 0.00073, true),
  c('TW', 'TWD', 'EMERGING_MARKETS', ['XTAI'], 'Corp', 2, 0.031, true),
  c('MX', 'MXN', 'EMERGING_MARKETS', ['XMEX'], 'SAB de CV', 1, 0.055),
  c('ZA', 'ZAR', 'EMERGING_MARKETS', ['XJSE'], 'Ltd', 1, 0.054),
  // Domiciles of the ETFs only (weight 0: no stocks).
  c('IE', 'EUR', 'EUROPE', ['XETR', 'XAMS'], 'plc', 0, 1.08),
  c('LU', 'EUR', 'EUROPE', ['XETR', 'XPAR'], 'SA', 0, 1.08),
];

export type Sector = {
  name: string;
  weight: number;
  beta: number;
  /** Typical dividend yield, earnings yield, earnings growth, return on equity. */
  dividend: number;
  earningsYield: number;
  growth: number;
  roe: number;
};

const s = (name: string, weight: number, beta: number, dividend: number, earningsYield: number, growth: number, roe: number): Sector => ({
  name,
  weight,
  beta,
  dividend,
  earningsYield,
  growth,
  roe,
});

export const SECTORS: Sector[] = [
  s('ENERGY', 5, 1.1, 0.04, 0.09, 0.02, 0.12),
  s('MATERIALS', 7, 1.1, 0.028, 0.07, 0.04, 0.11),
  s('INDUSTRIALS', 14, 1.05, 0.02, 0.055, 0.06, 0.13),
  s('CONSUMER_DISCRETIONARY', 11, 1.15, 0.015, 0.05, 0.08, 0.14),
  s('CONSUMER_STAPLES', 6, 0.65, 0.028, 0.05, 0.04, 0.16),
  s('HEALTH_CARE', 11, 0.8, 0.015, 0.045, 0.08, 0.15),
  s('FINANCIALS', 14, 1.1, 0.035, 0.085, 0.05, 0.11),
  s('INFORMATION_TECHNOLOGY', 14, 1.25, 0.008, 0.035, 0.12, 0.18),
  s('COMMUNICATION_SERVICES', 6, 1.0, 0.02, 0.055, 0.07, 0.12),
  s('UTILITIES', 4, 0.55, 0.045, 0.06, 0.03, 0.09),
  s('REAL_ESTATE', 4, 0.85, 0.04, 0.06, 0.03, 0.07),
];

export type EtfProduct = {
  assetClass: 'EQUITY' | 'FIXED_INCOME' | 'COMMODITY' | 'REAL_ESTATE' | 'CASH';
  subclass: string;
  label: string;
  /** Exposure region (GLOBAL when world-wide). */
  region: (typeof REGIONS)[number] | 'GLOBAL';
  /** Domiciles it is listed from (its currency is the domicile's). */
  domiciles: string[];
  market: number;
  regional: number;
  /** Sector factor it loads on (REAL_ESTATE for property funds, …). */
  sector?: string;
  sectorLoading?: number;
  rates: number;
  credit: number;
  commodity: number;
  idio: number;
  drift: number;
  dividend: number;
  ter: [number, number];
};

const e = (p: Partial<EtfProduct> & Pick<EtfProduct, 'assetClass' | 'subclass' | 'label' | 'region' | 'drift' | 'dividend' | 'ter'>): EtfProduct => ({
  domiciles: ['IE', 'LU', 'US'],
  market: 0,
  regional: 0,
  rates: 0,
  credit: 0,
  commodity: 0,
  idio: 0.02,
  ...p,
});

export const ETF_PRODUCTS: EtfProduct[] = [
  e({
    assetClass: 'EQUITY',
    subclass: 'DEVELOPED_EQUITY',
    label: 'World Equity',
    region: 'GLOBAL',
    market: 0.14,
    drift: 0.07,
    dividend: 0.018,
    ter: [0.0012, 0.003],
  }),
  e({
    assetClass: 'EQUITY',
    subclass: 'DEVELOPED_EQUITY',
    label: 'North America Equity',
    region: 'NORTH_AMERICA',
    market: 0.14,
    regional: 0.05,
    drift: 0.075,
    dividend: 0.014,
    ter: [0.0003, 0.0015],
  }),
  e({
    assetClass: 'EQUITY',
    subclass: 'DEVELOPED_EQUITY',
    label: 'Europe Equity',
    region: 'EUROPE',
    market: 0.13,
    regional: 0.06,
    drift: 0.06,
    dividend: 0.03,
    ter: [0.001, 0.003],
  }),
  e({
    assetClass: 'EQUITY',
    subclass: 'DEVELOPED_EQUITY',
    label: 'Asia Pacific Equity',
    region: 'ASIA_PACIFIC',
    market: 0.12,
    regional: 0.07,
    drift: 0.06,
    dividend: 0.025,
    ter: [0.0015, 0.004],
  }),
  e({
    assetClass: 'EQUITY',
    subclass: 'EMERGING_EQUITY',
    label: 'Emerging Markets Equity',
    region: 'EMERGING_MARKETS',
    market: 0.13,
    regional: 0.1,
    drift: 0.07,
    dividend: 0.027,
    ter: [0.0018, 0.0065],
  }),
  e({
    assetClass: 'EQUITY',
    subclass: 'DEVELOPED_EQUITY',
    label: 'World Small Cap Equity',
    region: 'GLOBAL',
    market: 0.16,
    idio: 0.05,
    drift: 0.08,
    dividend: 0.015,
    ter: [0.0025, 0.0045],
  }),
  e({
    assetClass: 'EQUITY',
    subclass: 'DEVELOPED_EQUITY',
    label: 'World Information Technology',
    region: 'GLOBAL',
    market: 0.16,
    sector: 'INFORMATION_TECHNOLOGY',
    sectorLoading: 0.08,
    drift: 0.09,
    dividend: 0.007,
    ter: [0.0018, 0.0035],
  }),
  e({
    assetClass: 'EQUITY',
    subclass: 'DEVELOPED_EQUITY',
    label: 'World High Dividend Equity',
    region: 'GLOBAL',
    market: 0.11,
    drift: 0.06,
    dividend: 0.04,
    ter: [0.0029, 0.0038],
  }),
  e({
    assetClass: 'EQUITY',
    subclass: 'DEVELOPED_EQUITY',
    label: 'World Minimum Volatility Equity',
    region: 'GLOBAL',
    market: 0.095,
    drift: 0.06,
    dividend: 0.022,
    ter: [0.0025, 0.003],
  }),
  e({
    assetClass: 'FIXED_INCOME',
    subclass: 'GOVERNMENT_BOND',
    label: 'Euro Government Bond',
    region: 'EUROPE',
    domiciles: ['IE', 'LU'],
    rates: 0.055,
    idio: 0.008,
    drift: 0.025,
    dividend: 0.028,
    ter: [0.0007, 0.0016],
  }),
  e({
    assetClass: 'FIXED_INCOME',
    subclass: 'GOVERNMENT_BOND',
    label: 'US Treasury Bond',
    region: 'NORTH_AMERICA',
    domiciles: ['US'],
    rates: 0.06,
    idio: 0.008,
    drift: 0.03,
    dividend: 0.035,
    ter: [0.0003, 0.0015],
  }),
  e({
    assetClass: 'FIXED_INCOME',
    subclass: 'CORPORATE_BOND',
    label: 'Euro Corporate Bond',
    region: 'EUROPE',
    domiciles: ['IE', 'LU'],
    rates: 0.04,
    credit: 0.025,
    market: 0.01,
    idio: 0.008,
    drift: 0.03,
    dividend: 0.032,
    ter: [0.0009, 0.002],
  }),
  e({
    assetClass: 'FIXED_INCOME',
    subclass: 'HIGH_YIELD_BOND',
    label: 'Global High Yield Bond',
    region: 'GLOBAL',
    rates: 0.02,
    credit: 0.05,
    market: 0.03,
    idio: 0.01,
    drift: 0.045,
    dividend: 0.058,
    ter: [0.0025, 0.005],
  }),
  e({
    assetClass: 'FIXED_INCOME',
    subclass: 'INFLATION_LINKED_BOND',
    label: 'Global Inflation Linked Bond',
    region: 'GLOBAL',
    rates: 0.045,
    commodity: 0.01,
    idio: 0.01,
    drift: 0.025,
    dividend: 0.022,
    ter: [0.001, 0.0025],
  }),
  e({
    assetClass: 'COMMODITY',
    subclass: 'PRECIOUS_METALS',
    label: 'Physical Gold',
    region: 'GLOBAL',
    commodity: 0.07,
    idio: 0.12,
    drift: 0.04,
    dividend: 0,
    ter: [0.0012, 0.004],
  }),
  e({
    assetClass: 'COMMODITY',
    subclass: 'BROAD_COMMODITIES',
    label: 'Broad Commodities',
    region: 'GLOBAL',
    commodity: 0.15,
    market: 0.03,
    idio: 0.03,
    drift: 0.03,
    dividend: 0,
    ter: [0.0019, 0.006],
  }),
  e({
    assetClass: 'REAL_ESTATE',
    subclass: 'LISTED_REAL_ESTATE',
    label: 'Global Property',
    region: 'GLOBAL',
    market: 0.12,
    sector: 'REAL_ESTATE',
    sectorLoading: 0.09,
    idio: 0.03,
    drift: 0.055,
    dividend: 0.035,
    ter: [0.0024, 0.004],
  }),
  e({
    assetClass: 'REAL_ESTATE',
    subclass: 'LISTED_REAL_ESTATE',
    label: 'Europe Property',
    region: 'EUROPE',
    domiciles: ['IE', 'LU'],
    market: 0.12,
    regional: 0.06,
    sector: 'REAL_ESTATE',
    sectorLoading: 0.1,
    idio: 0.04,
    drift: 0.05,
    dividend: 0.038,
    ter: [0.0025, 0.0045],
  }),
  e({
    assetClass: 'CASH',
    subclass: 'MONEY_MARKET',
    label: 'Euro Money Market',
    region: 'EUROPE',
    domiciles: ['IE', 'LU'],
    idio: 0.003,
    drift: 0.025,
    dividend: 0.025,
    ter: [0.0005, 0.0015],
  }),
  e({
    assetClass: 'CASH',
    subclass: 'MONEY_MARKET',
    label: 'US Dollar Money Market',
    region: 'NORTH_AMERICA',
    domiciles: ['US'],
    idio: 0.003,
    drift: 0.035,
    dividend: 0.035,
    ter: [0.0007, 0.0012],
  }),
];

/**
 * Analysts' target prices of the covered stocks as upside over the last price, from −30 % to +50 %:
 * +10 % on average and below the price for about a quarter of them, as consensus targets lean
 * optimistic. ETFs and bonds have none, as vendors publish targets for stocks only.
 */
export const ANALYST_UPSIDE = { min: -0.3, max: 0.5 } as const;

/**
 * The currency of the demo tenant's portfolios. The first ETF of each product is listed from a
 * domicile of this currency when the product has one, so even a small sample holds ETFs of every
 * asset class that such portfolios can buy (robo-advice needs prices in the portfolio's currency).
 */
export const DEMO_CURRENCY = 'EUR';

/** Market caps (USD) at and above which a stock is LARGE, MID. */
export const SIZE_BOUNDS = { large: 10e9, mid: 2e9 };

/** A SQL literal of a JS value (strings quoted, null for undefined). */
export const sqlLiteral = (v: unknown): string =>
  v === undefined || v === null
    ? 'null'
    : typeof v === 'number'
      ? String(v)
      : typeof v === 'boolean'
        ? String(v)
        : Array.isArray(v)
          ? `[${v.map(sqlLiteral).join(', ')}]`
          : `'${String(v).replace(/'/g, "''")}'`;

/** `(values (…), (…)) t(col, …)` of rows, for use in a from clause. */
export const sqlValues = (alias: string, columns: string[], rows: unknown[][]) =>
  `(values ${rows.map((r) => `(${r.map(sqlLiteral).join(', ')})`).join(', ')}) ${alias}(${columns.join(', ')})`;
