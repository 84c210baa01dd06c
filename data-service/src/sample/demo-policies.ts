// The demo tenant's robo-advice policies: one per risk level, whose model portfolios hold ETFs of the
// reference data priced in the demo portfolios' currency. Pure: the caller reads the instruments and
// stores the policies.
import { DEMO_CURRENCY } from './catalogue.ts';

/** What the choice reads of an instrument (reference fields, lower case, as the data interface answers them). */
export type PolicyInstrument = {
  isin: string;
  instrument_type: string | null;
  asset_class: string | null;
  asset_subclass: string | null;
  region: string | null;
  currency: string | null;
  price: number | null;
  ter: number | null;
};

export type PolicyConfig = {
  minimum_funding_amount: string;
  cash_buffer: number;
  rebalancing_threshold: number;
  fractional_shares: boolean;
  transaction_cost_bps: number;
  fx_cost_bps?: number;
  asset_class_bands: Record<string, [number, number]>;
  model_portfolio: Record<string, number>;
};

/** A policy as the management interface creates it (PolicyCreate), and the key credentials.json lists its id under. */
export type DemoPolicy = { level: string; external_id: string; name: string; description: string; config: PolicyConfig };

/** Weights are whole basis points until the end, so sums and bands are exact. */
const WHOLE = 10_000;
const CASH_BUFFER = 200;
/** Half the width of an asset class's band around its model weight. */
const BAND = 1_000;

/** From defensive to aggressive: the equity ETFs' share of the portfolio; bond ETFs take the rest but the cash buffer. */
const LEVELS = [
  { level: 'defensive', name: 'Sample Defensive', equity: 2_000 },
  { level: 'conservative', name: 'Sample Conservative', equity: 3_900 },
  { level: 'balanced', name: 'Sample Balanced', equity: 5_900 },
  { level: 'growth', name: 'Sample Growth', equity: 7_800 },
  { level: 'aggressive', name: 'Sample Aggressive', equity: 9_800 },
] as const;

/** The building blocks of each asset class and their shares of it: regions for equity, kinds of bond for fixed income. */
const SLEEVES: Record<'EQUITY' | 'FIXED_INCOME', { subclass: string; region: string; share: number }[]> = {
  EQUITY: [
    { subclass: 'DEVELOPED_EQUITY', region: 'NORTH_AMERICA', share: 55 },
    { subclass: 'DEVELOPED_EQUITY', region: 'EUROPE', share: 25 },
    { subclass: 'DEVELOPED_EQUITY', region: 'ASIA_PACIFIC', share: 10 },
    { subclass: 'EMERGING_EQUITY', region: 'EMERGING_MARKETS', share: 10 },
  ],
  FIXED_INCOME: [
    { subclass: 'GOVERNMENT_BOND', region: 'EUROPE', share: 50 },
    { subclass: 'CORPORATE_BOND', region: 'EUROPE', share: 30 },
    { subclass: 'INFLATION_LINKED_BOND', region: 'GLOBAL', share: 10 },
    { subclass: 'HIGH_YIELD_BOND', region: 'GLOBAL', share: 10 },
  ],
};

/** Lowest TER first (unknown last), then by ISIN: the cheapest fund of an exposure, the same one every time. */
const cheapest = (candidates: PolicyInstrument[]): PolicyInstrument | undefined =>
  [...candidates].sort((a, b) => (a.ter ?? Infinity) - (b.ter ?? Infinity) || (a.isin < b.isin ? -1 : a.isin > b.isin ? 1 : 0))[0];

/** `total` split by `shares` into whole numbers (largest remainder; ties to the earlier share), summing to `total`. */
function apportion(total: number, shares: number[]): number[] {
  const sum = shares.reduce((a, s) => a + s, 0);
  const exact = shares.map((s) => (total * s) / sum);
  const parts = exact.map(Math.floor);
  let left = total - parts.reduce((a, p) => a + p, 0);
  const order = exact.map((e, k) => ({ k, rest: e - Math.floor(e) })).sort((a, b) => b.rest - a.rest || a.k - b.k);
  for (const { k } of order) {
    if (left-- <= 0) break;
    parts[k]! += 1;
  }
  return parts;
}

/**
 * The ETFs an asset class is built of, with their shares: the cheapest ETF of each sleeve that has
 * one; when no sleeve has one (reference data classified otherwise), the cheapest ETF of the class.
 */
function classHoldings(assetClass: keyof typeof SLEEVES, etfs: PolicyInstrument[]): { isin: string; share: number }[] {
  const ofClass = etfs.filter((e) => e.asset_class === assetClass);
  const sleeves = SLEEVES[assetClass].flatMap((s) => {
    const pick = cheapest(ofClass.filter((e) => e.asset_subclass === s.subclass && e.region === s.region));
    return pick ? [{ isin: pick.isin, share: s.share }] : [];
  });
  if (sleeves.length > 0) return sleeves;
  const any = cheapest(ofClass);
  return any ? [{ isin: any.isin, share: 1 }] : [];
}

const percent = (bps: number) => `${bps / 100} %`;

/**
 * The demo policies for `instruments` (the reference data's), or none and the asset classes that
 * lack an ETF priced in `currency` (a policy's instruments must be priced in its portfolios'
 * currency). Every level holds the same ETFs at weights of its own; weights sum to 1 less the cash
 * buffer, and each asset class's band lies ±10 points around its weight.
 */
export function demoPolicies(instruments: readonly PolicyInstrument[], currency = DEMO_CURRENCY): { policies: DemoPolicy[]; missing: string[] } {
  const etfs = instruments.filter((i) => i.instrument_type === 'ETF' && i.currency === currency && typeof i.price === 'number' && i.price > 0);
  const holdings = { EQUITY: classHoldings('EQUITY', etfs), FIXED_INCOME: classHoldings('FIXED_INCOME', etfs) };
  const missing = Object.entries(holdings).flatMap(([assetClass, list]) => (list.length === 0 ? [assetClass] : []));
  if (missing.length > 0) return { policies: [], missing };
  const policies = LEVELS.map(({ level, name, equity }): DemoPolicy => {
    const classWeights = { EQUITY: equity, FIXED_INCOME: WHOLE - CASH_BUFFER - equity };
    const model: Record<string, number> = {};
    const bands: Record<string, [number, number]> = {};
    for (const [assetClass, weight] of Object.entries(classWeights) as [keyof typeof holdings, number][]) {
      const list = holdings[assetClass];
      const shares = list.map((h) => h.share);
      const parts = apportion(weight, shares);
      list.forEach((h, k) => {
        if (parts[k]! > 0) model[h.isin] = parts[k]! / WHOLE;
      });
      bands[assetClass] = [Math.max(0, weight - BAND) / WHOLE, Math.min(WHOLE, weight + BAND) / WHOLE];
    }
    return {
      level,
      external_id: `sample-policy-${level}`,
      name,
      description:
        `Demo policy of the sample universe: ${percent(classWeights.EQUITY)} equity and ${percent(classWeights.FIXED_INCOME)} bond ETFs ` +
        `priced in ${currency}, ${percent(CASH_BUFFER)} cash.`,
      config: {
        minimum_funding_amount: '1000',
        cash_buffer: CASH_BUFFER / WHOLE,
        rebalancing_threshold: 0.05,
        fractional_shares: false,
        transaction_cost_bps: 10,
        asset_class_bands: bands,
        model_portfolio: model,
      },
    };
  });
  return { policies, missing: [] };
}

/** What the policy in dollars pays to convert: 10 bps of the amount converted, a retail broker's order of magnitude. */
const FX_COST_BPS = 10;

/**
 * The demo policy whose equity is held in ETFs priced in `foreign` (dollars) for portfolios in
 * `currency`, its bonds in `currency`: the balanced level's weights and bands, the policy's
 * fx_cost_bps charged on what its orders convert. Undefined when the reference data lacks an equity
 * ETF priced in `foreign` or a bond ETF priced in `currency`.
 */
export function demoForeignPolicy(instruments: readonly PolicyInstrument[], currency = DEMO_CURRENCY, foreign = 'USD'): DemoPolicy | undefined {
  const priced = (k: string) => instruments.filter((i) => i.instrument_type === 'ETF' && i.currency === k && typeof i.price === 'number' && i.price > 0);
  const holdings = { EQUITY: classHoldings('EQUITY', priced(foreign)), FIXED_INCOME: classHoldings('FIXED_INCOME', priced(currency)) };
  if (holdings.EQUITY.length === 0 || holdings.FIXED_INCOME.length === 0) return undefined;
  const equity = LEVELS[2].equity;
  const classWeights = { EQUITY: equity, FIXED_INCOME: WHOLE - CASH_BUFFER - equity };
  const model: Record<string, number> = {};
  const bands: Record<string, [number, number]> = {};
  for (const [assetClass, weight] of Object.entries(classWeights) as [keyof typeof holdings, number][]) {
    const list = holdings[assetClass];
    const parts = apportion(
      weight,
      list.map((h) => h.share),
    );
    list.forEach((h, k) => {
      if (parts[k]! > 0) model[h.isin] = parts[k]! / WHOLE;
    });
    bands[assetClass] = [Math.max(0, weight - BAND) / WHOLE, Math.min(WHOLE, weight + BAND) / WHOLE];
  }
  return {
    level: `balanced_${foreign.toLowerCase()}`,
    external_id: `sample-policy-balanced-${foreign.toLowerCase()}`,
    name: `Sample Balanced ${foreign}`,
    description:
      `Demo policy of the sample universe: ${percent(classWeights.EQUITY)} equity ETFs priced in ${foreign} and ${percent(classWeights.FIXED_INCOME)} ` +
      `bond ETFs priced in ${currency}, ${percent(CASH_BUFFER)} cash; converting costs ${FX_COST_BPS} bps.`,
    config: {
      minimum_funding_amount: '1000',
      cash_buffer: CASH_BUFFER / WHOLE,
      rebalancing_threshold: 0.05,
      fractional_shares: false,
      transaction_cost_bps: 10,
      fx_cost_bps: FX_COST_BPS,
      asset_class_bands: bands,
      model_portfolio: model,
    },
  };
}

/** The model's ISINs that are not an instrument of `instruments` priced in one of `currencies`: a policy naming any is out of date. */
export function unpricedIsins(
  config: { model_portfolio?: Record<string, unknown> },
  instruments: readonly PolicyInstrument[],
  currencies: string | readonly string[] = DEMO_CURRENCY,
): string[] {
  const accepted = new Set(typeof currencies === 'string' ? [currencies] : currencies);
  const priced = new Set(
    instruments.filter((i) => i.currency !== null && accepted.has(i.currency) && typeof i.price === 'number' && i.price > 0).map((i) => i.isin),
  );
  return Object.keys(config.model_portfolio ?? {}).filter((isin) => !priced.has(isin));
}

/**
 * The merge patch (RFC 7396, as PATCH /policies/{id} takes it) that turns a stored policy into
 * `wanted`: model instruments and bands it no longer has are removed (null).
 */
export function policyPatch(
  current: { config: { model_portfolio?: Record<string, unknown>; asset_class_bands?: Record<string, unknown> } },
  wanted: DemoPolicy,
): Record<string, unknown> {
  const removed = (old: Record<string, unknown> | undefined, now: Record<string, unknown>) =>
    Object.fromEntries(Object.keys(old ?? {}).flatMap((key) => (key in now ? [] : [[key, null]])));
  return {
    name: wanted.name,
    description: wanted.description,
    config: {
      ...wanted.config,
      model_portfolio: { ...removed(current.config.model_portfolio, wanted.config.model_portfolio), ...wanted.config.model_portfolio },
      asset_class_bands: { ...removed(current.config.asset_class_bands, wanted.config.asset_class_bands), ...wanted.config.asset_class_bands },
    },
  };
}
