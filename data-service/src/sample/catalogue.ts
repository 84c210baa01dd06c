// The made-up world the sample universe is drawn from: countries with their currency, region and
// exchanges, GICS-like sectors with typical betas and fundamentals (the ETF products are in
// etf-products.ts).

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
