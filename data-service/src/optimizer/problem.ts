/**
 * The portfolio optimizer's model (docs/adr/0020-optimizer-model.md), pure: a request and the
 * store's facts become a checked problem (here), the problem becomes a mixed-integer linear program in
 * CPLEX LP text and the solver's values become orders (program.ts), and orders are checked against
 * the constraints (checks.ts).
 *
 * Instruments i (the ISINs of the holdings and of the model portfolio) have a price p_i in the base
 * currency (their price times the rate of their currency), held shares h_i, a target weight w_i and
 * an asset class c_i; a_k is the cash held in another currency k valued in the base currency, C the
 * cash of every currency so valued, V = C + Σ p_i h_i the value, D the cash to free, W = V − D the
 * value left invested, t the cost rate, f the exchange cost rate. With buys b_i ≥ 0, sells
 * 0 ≤ s_i ≤ h_i, post-trade shares x_i = h_i + b_i − s_i, deviations d_i ≥ 0 and, per other
 * currency k with n_k = Σ_{k_i = k} p_i (b_i − s_i), the amount converted y_k ≥ 0:
 *
 *   minimise   Σ d_i + t Σ p_i (b_i + s_i) + f Σ y_k
 *   subject to C − Σ p_i (b_i − s_i) − t Σ p_i (b_i + s_i) − f Σ y_k ≥ cash_buffer·W + D   (cash)
 *              l_a W ≤ Σ_{c_i = a} p_i x_i ≤ u_a W                                  (each band a)
 *              d_i ≥ ±(p_i x_i − w_i W)                                               (deviation)
 *              y_k ≥ n_k − a_k,  y_k ≥ −n_k     (buys use their currency's cash first; net sales convert)
 *
 * Money (V, W, D, the checks' sums) is exact decimal; the program itself is floating point, which is
 * why every answer is checked again here, with a tolerance of one cent, before it is trusted.
 */
import { fromNumber, ownValue, type Money } from '@platform/shared';
import type { components } from '@platform/api-types/events';
import { toBase, type RateFact } from './rates.ts';

export type { RateFact } from './rates.ts';

export type OptimizerRequest = components['schemas']['OptimizerRequest'];
export type OptimizerResult = components['schemas']['OptimizerResult'];
export type OptimizerOrder = components['schemas']['OptimizerOrder'];
/**
 * What the store knows of an instrument: its last price (in `currency`), its asset class and, when
 * `currency` is not the request's base currency, the rate of `currency` to it. Cash held in another
 * currency is in the same map under its holdings key (`$USD`): one unit (price 1) of that currency.
 */
export type InstrumentFacts = { price: number | null; currency: string | null; assetClass: string | null; toBase?: RateFact };
export type Outcome = Pick<OptimizerResult, 'status' | 'is_recommended' | 'orders' | 'detail'>;

export type Instrument = {
  isin: string;
  /** p_i, in the base currency, > 0: the price in `currency` × `rate`. */
  price: number;
  /** The currency the instrument is priced in. */
  currency: string;
  /** Its price in `currency`. */
  localPrice: number;
  /** The base-currency value of one unit of `currency` (exact decimal text; "1" for the base currency). */
  rate: string;
  /** h_i ≥ 0 (0 when not held). */
  held: number;
  /** w_i (0 when not in the model portfolio). */
  weight: number;
  /** c_i; null: in no band. */
  assetClass: string | null;
  /** In the model portfolio: only those may be bought. */
  buyable: boolean;
};

export type Band = { assetClass: string; lower: number; upper: number };

/** A currency other than the base in which instruments are priced or cash is held. */
export type Foreign = {
  currency: string;
  /** a_k: the cash held in it, valued in the base currency (part of C). */
  cash: Money;
};

/** A checked request: everything the program and the checks need. */
export type Problem = {
  currency: string;
  /** Sorted by ISIN. */
  instruments: readonly Instrument[];
  /** C: the cash of every currency, valued in the base currency. */
  cash: Money;
  /** The other currencies of the instruments and the cash, sorted. */
  foreign: readonly Foreign[];
  /** f = fx_cost_bps / 10,000, on the amount each other currency converts. */
  fxRate: Money;
  /** V = C + Σ p_i h_i. */
  value: Money;
  /** D: cash to free (what a sale of everything frees when `sellEverything`). */
  divest: Money;
  /** W = V − D (0 when `sellEverything`). */
  invested: Money;
  /** The divest amount is at least what selling everything frees: every share is sold. */
  sellEverything: boolean;
  /** t = transaction_cost_bps / 10,000. */
  costRate: Money;
  cashBuffer: number;
  bands: readonly Band[];
  fractional: boolean;
  /** rebalancing_threshold (0 when absent). */
  threshold: number;
};

/** Either a problem to solve or an outcome known without solving (FAILURE, NOT_OPTIMIZED). */
export type Prepared = { problem: Problem; outcome?: undefined } | { outcome: Outcome; problem?: undefined };

export const ZERO = fromNumber(0);
const ONE = fromNumber(1);
/** The tolerance of every check: one cent of the base currency. */
export const CENT = fromNumber(0.01);
/**
 * A whole-share answer is accepted when its objective is provably within this fraction of V of the
 * best possible (0.3 % of the portfolio's value; docs/adr/0020-optimizer-model.md says why).
 */
export const MIP_GAP = 3e-3;
/** Fractional orders are rounded to this many decimals. */
export const SHARE_DECIMALS = 6;
const LISTED = 10;

export function failure(detail: string): Outcome {
  return { status: 'FAILURE', is_recommended: false, orders: {}, detail };
}

export function notOptimized(detail: string): Outcome {
  return { status: 'NOT_OPTIMIZED', is_recommended: false, orders: {}, detail };
}

export function infeasible(detail: string): Outcome {
  return { status: 'INFEASIBLE', is_recommended: false, orders: {}, detail };
}

export const money = (m: Money) => m.toFixed(2);

function listed(items: string[]): string {
  return items.length <= LISTED ? items.join(', ') : `${items.slice(0, LISTED).join(', ')} and ${items.length - LISTED} more`;
}

function isFraction(n: number): boolean {
  return Number.isFinite(n) && n >= 0 && n <= 1;
}

/**
 * Checks the request against the store's facts and builds the problem. Refused (FAILURE): a bad
 * policy, a negative holding, an ISIN without a positive price or a currency, a currency of an
 * instrument or of non-zero cash without a usable rate to the base currency (the pair named, and
 * what needs it), a negative value. An empty portfolio (V = 0) is NOT_OPTIMIZED.
 */
export function prepare(request: OptimizerRequest, facts: ReadonlyMap<string, InstrumentFacts>): Prepared {
  const base = request.base_currency;
  const bps = request.transaction_cost_bps;
  if (!(Number.isFinite(bps) && bps >= 0 && bps < 10_000)) return { outcome: failure(`transaction cost of ${bps} bps is not between 0 and 10000`) };
  const fxBps = request.fx_cost_bps ?? 0;
  if (!(Number.isFinite(fxBps) && fxBps >= 0 && fxBps < 10_000)) return { outcome: failure(`exchange cost of ${fxBps} bps is not between 0 and 10000`) };
  if (!isFraction(request.cash_buffer)) return { outcome: failure(`cash buffer ${request.cash_buffer} is not between 0 and 1`) };
  const threshold = request.rebalancing_threshold ?? 0;
  if (!isFraction(threshold)) return { outcome: failure(`rebalancing threshold ${threshold} is not between 0 and 1`) };
  if (!(Number.isFinite(request.divest_amount) && request.divest_amount >= 0))
    return { outcome: failure(`divest amount ${request.divest_amount} is negative`) };

  const bands: Band[] = [];
  for (const [assetClass, band] of Object.entries(request.asset_class_bands).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const lower = band[0] ?? Number.NaN;
    const upper = band[1] ?? Number.NaN;
    if (!isFraction(lower) || !isFraction(upper)) return { outcome: failure(`asset class ${assetClass} band [${lower}, ${upper}] is not within [0, 1]`) };
    if (lower > upper) return { outcome: failure(`asset class ${assetClass} band has its lower bound ${lower} above its upper bound ${upper}`) };
    bands.push({ assetClass, lower, upper });
  }

  let weights = ZERO;
  for (const [isin, weight] of Object.entries(request.model_portfolio)) {
    if (!isFraction(weight)) return { outcome: failure(`model portfolio weight ${weight} of ${isin} is not between 0 and 1`) };
    weights = weights.plus(fromNumber(weight));
  }
  if (weights.gt(ONE)) return { outcome: failure(`model portfolio weights sum to ${weights.toFixed()}, above 1`) };

  const held = new Map<string, number>();
  for (const [key, quantity] of Object.entries(request.holdings)) {
    if (key.startsWith('$')) continue;
    if (!(Number.isFinite(quantity) && quantity >= 0)) return { outcome: failure(`holding of ${key} is ${quantity} shares; short positions are not kept`) };
    held.set(key, quantity);
  }
  const rates = new Map<string, Money>([[base, ONE]]);
  /** Why a currency has no rate, and the holdings keys and ISINs that need it. */
  const refused = new Map<string, { detail: string; keys: string[] }>();
  /** The base value of one unit of `currency` for `key`, or undefined with the refusal noted. */
  const rateOf = (key: string, currency: string, fact: InstrumentFacts | undefined): Money | undefined => {
    const known = rates.get(currency);
    if (known) return known;
    const rate = refused.get(currency)?.detail ?? toBase(currency, base, fact?.toBase);
    if (typeof rate !== 'string') {
      rates.set(currency, rate);
      return rate;
    }
    const refusal = refused.get(currency) ?? { detail: rate, keys: [] };
    refusal.keys.push(key);
    refused.set(currency, refusal);
    return undefined;
  };

  let cash = ZERO;
  const cashIn = new Map<string, Money>();
  for (const [key, amount] of Object.entries(request.holdings).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!key.startsWith('$')) continue;
    const currency = key.slice(1);
    if (!Number.isFinite(amount)) return { outcome: failure(`cash ${amount} ${currency} is not a number`) };
    // No cash of a currency is worth 0 whatever its rate: it needs none.
    if (amount === 0) continue;
    const rate = rateOf(key, currency, facts.get(key));
    if (rate === undefined) continue;
    const valued = fromNumber(amount).times(rate);
    cash = cash.plus(valued);
    if (currency !== base) cashIn.set(currency, valued);
  }

  const isins = [...new Set([...held.keys(), ...Object.keys(request.model_portfolio)])].sort();
  const unpriced: string[] = [];
  const uncurrencied: string[] = [];
  const instruments: Instrument[] = [];
  for (const isin of isins) {
    const fact = facts.get(isin);
    const price = fact?.price;
    if (fact === undefined || price === null || price === undefined || !(Number.isFinite(price) && price > 0)) {
      unpriced.push(isin);
      continue;
    }
    if (fact.currency === null) {
      uncurrencied.push(isin);
      continue;
    }
    const rate = rateOf(isin, fact.currency, fact);
    if (rate === undefined) continue;
    const weight = ownValue(request.model_portfolio, isin);
    instruments.push({
      isin,
      price: fromNumber(price).times(rate).toNumber(),
      currency: fact.currency,
      localPrice: price,
      rate: rate.toFixed(),
      held: held.get(isin) ?? 0,
      weight: weight ?? 0,
      assetClass: fact.assetClass,
      buyable: weight !== undefined,
    });
  }
  if (unpriced.length > 0) return { outcome: failure(`no price for ${listed(unpriced)}`) };
  if (uncurrencied.length > 0) return { outcome: failure(`no currency for the price of ${listed(uncurrencied)}`) };
  if (refused.size > 0) return { outcome: failure([...refused.values()].map(({ detail, keys }) => `${detail} (needed for ${listed(keys)})`).join('; ')) };

  const foreign: Foreign[] = [...new Set([...cashIn.keys(), ...instruments.map((i) => i.currency).filter((c) => c !== base)])]
    .sort()
    .map((currency) => ({ currency, cash: cashIn.get(currency) ?? ZERO }));
  const costRate = fromNumber(bps).div(10_000);
  const fxRate = fromNumber(fxBps).div(10_000);
  let invested = ZERO;
  let investedForeign = ZERO;
  for (const i of instruments) {
    const worth = fromNumber(i.price).times(fromNumber(i.held));
    invested = invested.plus(worth);
    if (i.currency !== base) investedForeign = investedForeign.plus(worth);
  }
  const value = cash.plus(invested);
  if (value.isZero()) return { outcome: notOptimized('the portfolio is empty (value 0)') };
  if (value.lt(ZERO)) return { outcome: failure(`portfolio value ${money(value)} ${base} is negative`) };

  // Selling everything frees C + (1 − t) Σ p_i h_i − f Σ_{foreign} p_i h_i (the proceeds in other
  // currencies are converted); a larger divest amount (1e100 included) cannot be met otherwise, so
  // it means selling everything, with nothing left invested.
  const freeable = cash.plus(ONE.minus(costRate).times(invested)).minus(fxRate.times(investedForeign));
  const asked = fromNumber(request.divest_amount);
  const sellEverything = asked.gt(ZERO) && asked.gte(freeable);
  const divest = sellEverything ? freeable : asked;
  return {
    problem: {
      currency: base,
      instruments,
      cash,
      foreign,
      fxRate,
      value,
      divest,
      invested: sellEverything ? ZERO : value.minus(divest),
      sellEverything,
      costRate,
      cashBuffer: request.cash_buffer,
      bands,
      fractional: request.fractional_shares,
      threshold,
    },
  };
}

/** The cash the constraint asks for after trading: cash_buffer·W + D. */
export function requiredCash(problem: Problem): Money {
  return fromNumber(problem.cashBuffer).times(problem.invested).plus(problem.divest);
}

/**
 * Drift: half the sum, over the instruments and the cash, of |current weight − target weight|,
 * weights relative to V and the cash target 1 − Σ w_i (0: on target; 1: nothing where it should be).
 */
export function drift(problem: Problem): number {
  const v = problem.value;
  let total = ZERO;
  let targets = ZERO;
  for (const i of problem.instruments) {
    const weight = fromNumber(i.weight);
    targets = targets.plus(weight);
    total = total.plus(fromNumber(i.price).times(fromNumber(i.held)).div(v).minus(weight).abs());
  }
  total = total.plus(problem.cash.div(v).minus(ONE.minus(targets)).abs());
  return total.div(2).toNumber();
}

/** Orders are worth executing: drift above the threshold, or the cash constraint unmet before trading (cash to free included). */
export function isRecommended(problem: Problem): boolean {
  return drift(problem) > problem.threshold || problem.cash.lt(requiredCash(problem));
}
