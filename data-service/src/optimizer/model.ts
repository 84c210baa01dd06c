/**
 * The portfolio optimizer's model (docs/adr/0020-optimizer-model.md), pure: a request and the
 * store's facts become a checked problem, the problem becomes a mixed-integer linear program in
 * CPLEX LP text, the solver's values become orders, and orders are checked against the constraints.
 *
 * Instruments i (the ISINs of the holdings and of the model portfolio) have a price p_i, held shares
 * h_i, a target weight w_i and an asset class c_i; C is the base-currency cash, V = C + Σ p_i h_i the
 * value, D the cash to free, W = V − D the value left invested, t the cost rate. With buys b_i ≥ 0,
 * sells 0 ≤ s_i ≤ h_i, post-trade shares x_i = h_i + b_i − s_i and deviations d_i ≥ 0:
 *
 *   minimise   Σ d_i + t Σ p_i (b_i + s_i)
 *   subject to C − Σ p_i (b_i − s_i) − t Σ p_i (b_i + s_i) ≥ cash_buffer·W + D      (cash)
 *              l_a W ≤ Σ_{c_i = a} p_i x_i ≤ u_a W                                  (each band a)
 *              d_i ≥ ±(p_i x_i − w_i W)                                               (deviation)
 *
 * Money (V, W, D, the checks' sums) is exact decimal; the program itself is floating point, which is
 * why every answer is checked again here, with a tolerance of one cent, before it is trusted.
 */
import { fromNumber, ownValue, type Money } from '@platform/shared';
import type { components } from '@platform/api-types/events';

export type OptimizerRequest = components['schemas']['OptimizerRequest'];
export type OptimizerResult = components['schemas']['OptimizerResult'];
export type OptimizerOrder = components['schemas']['OptimizerOrder'];
/** What the store knows of an instrument: its last price (in `currency`) and its asset class. */
export type InstrumentFacts = { price: number | null; currency: string | null; assetClass: string | null };
export type Outcome = Pick<OptimizerResult, 'status' | 'is_recommended' | 'orders' | 'detail'>;

export type Instrument = {
  isin: string;
  /** p_i, in the base currency, > 0. */
  price: number;
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

/** A checked request: everything the program and the checks need. */
export type Problem = {
  currency: string;
  /** Sorted by ISIN. */
  instruments: readonly Instrument[];
  /** C: the base-currency cash. */
  cash: Money;
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

const ZERO = fromNumber(0);
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

const money = (m: Money) => m.toFixed(2);

function listed(items: string[]): string {
  return items.length <= LISTED ? items.join(', ') : `${items.slice(0, LISTED).join(', ')} and ${items.length - LISTED} more`;
}

function isFraction(n: number): boolean {
  return Number.isFinite(n) && n >= 0 && n <= 1;
}

/**
 * Checks the request against the store's facts and builds the problem. Refused (FAILURE): a bad
 * policy, a negative holding, an ISIN without a positive price, a price in another currency than
 * the base currency, a negative value. An empty portfolio (V = 0) is NOT_OPTIMIZED.
 */
export function prepare(request: OptimizerRequest, facts: ReadonlyMap<string, InstrumentFacts>): Prepared {
  const base = request.base_currency;
  const bps = request.transaction_cost_bps;
  if (!(Number.isFinite(bps) && bps >= 0 && bps < 10_000)) return { outcome: failure(`transaction cost of ${bps} bps is not between 0 and 10000`) };
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
  const cashHeld = request.holdings[`$${base}`] ?? 0;
  if (!Number.isFinite(cashHeld)) return { outcome: failure(`cash ${cashHeld} ${base} is not a number`) };

  const isins = [...new Set([...held.keys(), ...Object.keys(request.model_portfolio)])].sort();
  const unpriced: string[] = [];
  const foreign: string[] = [];
  const instruments: Instrument[] = [];
  for (const isin of isins) {
    const fact = facts.get(isin);
    const price = fact?.price;
    if (fact === undefined || price === null || price === undefined || !(Number.isFinite(price) && price > 0)) {
      unpriced.push(isin);
      continue;
    }
    if (fact.currency !== base) {
      foreign.push(`${isin} (${fact.currency ?? 'no currency'})`);
      continue;
    }
    const weight = ownValue(request.model_portfolio, isin);
    instruments.push({ isin, price, held: held.get(isin) ?? 0, weight: weight ?? 0, assetClass: fact.assetClass, buyable: weight !== undefined });
  }
  if (unpriced.length > 0) return { outcome: failure(`no price for ${listed(unpriced)}`) };
  if (foreign.length > 0) return { outcome: failure(`price not in the base currency ${base} (no exchange rates are kept) for ${listed(foreign)}`) };

  const cash = fromNumber(cashHeld);
  const costRate = fromNumber(bps).div(10_000);
  let invested = ZERO;
  for (const i of instruments) invested = invested.plus(fromNumber(i.price).times(fromNumber(i.held)));
  const value = cash.plus(invested);
  if (value.isZero()) return { outcome: notOptimized('the portfolio is empty (value 0)') };
  if (value.lt(ZERO)) return { outcome: failure(`portfolio value ${money(value)} ${base} is negative`) };

  // Selling everything frees C + (1 − t) Σ p_i h_i; a larger divest amount (1e100 included) cannot
  // be met otherwise, so it means selling everything, with nothing left invested.
  const freeable = cash.plus(ONE.minus(costRate).times(invested));
  const asked = fromNumber(request.divest_amount);
  const sellEverything = asked.gt(ZERO) && asked.gte(freeable);
  const divest = sellEverything ? freeable : asked;
  return {
    problem: {
      currency: base,
      instruments,
      cash,
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

// ------------------------------------------------------------------ the linear program

/** A constraint that may be relaxed in the elastic copy. */
export type Relaxable = { kind: 'cash' } | { kind: 'lower' | 'upper'; band: Band };

export type Program = {
  text: string;
  /** Elastic copy: slack column name → the constraint it relaxes. */
  slacks: ReadonlyMap<string, Relaxable>;
  /** A constraint with no column to move it that does not hold (the plain program is infeasible). */
  unmet: readonly Relaxable[];
  /** Some instrument can trade (otherwise the holdings are the only answer). */
  trades: boolean;
  /** A whole-share search may stop this close (base currency) to the best bound: MIP_GAP × V. */
  gap: number;
};

type Term = readonly [coefficient: number, column: string];

/**
 * The columns of instrument i (by index). The program trades the net q_i = b_i − s_i = x_i − h_i
 * (buying and selling the same instrument at once only costs), bounded by −h_i ≤ q_i ≤ the buy
 * limit; t·p_i·(b_i + s_i) is a cost column u_i ≥ ±t·p_i·q_i. With whole shares q_i is whole,
 * except from a fractional holding, where q_i = m_i − f_i z_i: m_i whole, f_i the fraction held and
 * z_i = 1 only with a sale of everything (it forces m_i = −⌊h_i⌋, so nothing is bought).
 */
type Columns = {
  /** q_i as terms (empty: the instrument cannot trade). */
  trade: Term[];
  /** q_i itself, or m_i, with its bounds (absent: fixed at 0). */
  main?: { column: string; lower: number; upper: number };
  /** The sale-of-everything switch z_i. */
  all?: string;
  buyLimit: number;
};

function num(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`${n} in the linear program`);
  return String(n);
}

/** `+ 3 q0 - 2.5 u0 …` over lines of a few terms (the LP reader takes continuation lines). */
function expression(terms: readonly Term[]): string {
  const parts: string[] = [];
  for (const [c, column] of terms) {
    if (c === 0) continue;
    parts.push(`${c < 0 ? '-' : '+'} ${num(Math.abs(c))} ${column}`);
  }
  const lines: string[] = [];
  for (let k = 0; k < parts.length; k += 8) lines.push(parts.slice(k, k + 8).join(' '));
  return lines.join('\n   ');
}

function scaled(terms: readonly Term[], factor: number): Term[] {
  return terms.map(([c, column]) => [c * factor, column]);
}

function columnsOf(problem: Problem, index: number, i: Instrument): Columns {
  // A buy cannot exceed V in value: cash after trades would be negative.
  const limit = problem.value.div(fromNumber(i.price));
  const buyLimit = i.buyable && !problem.sellEverything ? (problem.fractional ? limit : limit.floor()).toNumber() : 0;
  const wholeHeld = Math.floor(i.held);
  if (problem.fractional || wholeHeld === i.held) {
    if (buyLimit === 0 && i.held === 0) return { trade: [], buyLimit };
    const column = `q${index}`;
    return { trade: [[1, column]], main: { column, lower: -i.held, upper: buyLimit }, buyLimit };
  }
  const all = `z${index}`;
  const trade: Term[] = [[-(i.held - wholeHeld), all]];
  if (buyLimit === 0 && wholeHeld === 0) return { trade, all, buyLimit };
  const column = `m${index}`;
  return { trade: [[1, column], ...trade], main: { column, lower: -wholeHeld, upper: buyLimit }, all, buyLimit };
}

/**
 * With whole shares x_i takes the values h_i + m (m whole) and 0. Between the two such values a and
 * a + 1 around the target T/p_i, |p_i x − T| is at least the chord through both ends,
 * d ≥ f(a) + (f(a+1) − f(a))·(x − a) = base + slope·x; by convexity that holds at every reachable
 * x (0 included, as a ≥ 0). Undefined when the chord adds nothing.
 */
function wholeShareChord(i: Instrument, target: number): { base: number; slope: number } | undefined {
  const offset = i.held - Math.floor(i.held);
  const a = Math.floor(target / i.price - offset) + offset;
  if (!(a >= 0)) return undefined;
  const fa = Math.abs(i.price * a - target);
  const slope = Math.abs(i.price * (a + 1) - target) - fa;
  if (Math.abs(slope) >= i.price * (1 - 1e-9)) return undefined;
  return { base: fa - slope * a, slope };
}

/**
 * The program in CPLEX LP text. `elastic`: every band side and the cash constraint get a slack
 * column and the objective is the sum of the slacks, so the constraints that cannot hold are named.
 */
export function buildProgram(problem: Problem, elastic = false): Program {
  const t = problem.costRate.toNumber();
  const w = problem.invested.toNumber();
  const rows: string[] = [];
  const objective: Term[] = [];
  const bounds: string[] = [];
  const generals: string[] = [];
  const binaries: string[] = [];
  const slacks = new Map<string, Relaxable>();
  const unmet: Relaxable[] = [];
  const cashTerms: Term[] = [];
  /** p_i·q_i as terms, per instrument. */
  const tradeValue: Term[][] = [];
  let trades = false;

  problem.instruments.forEach((i, index) => {
    const { trade, main, all, buyLimit } = columnsOf(problem, index, i);
    const p = i.price;
    const value = scaled(trade, p);
    tradeValue.push(value);
    if (trade.length > 0) {
      trades = true;
      cashTerms.push(...value);
      if (main) {
        bounds.push(` ${num(main.lower)} <= ${main.column} <= ${num(main.upper)}`);
        if (!problem.fractional) generals.push(main.column);
      }
      if (all) {
        binaries.push(all);
        if (main)
          rows.push(
            ` all${index}: ${expression([
              [1, main.column],
              [buyLimit - main.lower, all],
            ])} <= ${num(buyLimit)}`,
          );
      }
      if (t > 0) {
        const u = `u${index}`;
        cashTerms.push([1, u]);
        if (!elastic) objective.push([1, u]);
        rows.push(` up${index}: ${expression([[1, u], ...scaled(value, -t)])} >= 0`);
        rows.push(` un${index}: ${expression([[1, u], ...scaled(value, t)])} >= 0`);
      }
    }
    // The elastic copy minimises slacks only; deviations do not matter there.
    if (elastic) return;
    const d = `d${index}`;
    objective.push([1, d]);
    const gap = p * i.held - i.weight * w;
    rows.push(` dp${index}: ${expression([[1, d], ...scaled(value, -1)])} >= ${num(gap)}`);
    rows.push(` dn${index}: ${expression([[1, d], ...value])} >= ${num(-gap)}`);
    const chord = problem.fractional || trade.length === 0 ? undefined : wholeShareChord(i, i.weight * w);
    if (chord) {
      // Whole shares: d_i is at least the chord of |p_i x_i − w_i W| between the two reachable
      // share counts around the target. Every whole-share answer satisfies it; it closes most of
      // the gap between the linear relaxation and whole shares, which keeps the search short.
      rows.push(` dc${index}: ${expression([[1, d], ...scaled(trade, -chord.slope)])} >= ${num(chord.base + chord.slope * i.held)}`);
    }
  });

  addRow('c', cashTerms, '<=', problem.cash.minus(requiredCash(problem)).toNumber(), { kind: 'cash' }, 'vc');
  problem.bands.forEach((band, j) => {
    const members = problem.instruments.flatMap((i, index) => (i.assetClass === band.assetClass ? [index] : []));
    const heldValue = members.reduce(
      (sum, index) => sum.plus(fromNumber(problem.instruments[index]!.price).times(fromNumber(problem.instruments[index]!.held))),
      ZERO,
    );
    const terms = members.flatMap((index) => tradeValue[index]!);
    const lower = fromNumber(band.lower).times(problem.invested).minus(heldValue).toNumber();
    const upper = fromNumber(band.upper).times(problem.invested).minus(heldValue).toNumber();
    addRow(`bl${j}`, terms, '>=', lower, { kind: 'lower', band }, `vl${j}`);
    addRow(`bu${j}`, terms, '<=', upper, { kind: 'upper', band }, `vu${j}`);
  });

  function addRow(name: string, terms: Term[], sense: '<=' | '>=', rhs: number, constraint: Relaxable, slack: string): void {
    const all: Term[] = [...terms];
    if (elastic) {
      all.push([sense === '<=' ? -1 : 1, slack]);
      slacks.set(slack, constraint);
      objective.push([1, slack]);
    }
    if (all.every(([c]) => c === 0)) {
      // Nothing can move this row: it holds or it does not (an empty class with a lower bound > 0).
      if (sense === '<=' ? 0 > rhs : 0 < rhs) unmet.push(constraint);
      return;
    }
    rows.push(` ${name}: ${expression(all)} ${sense} ${num(rhs)}`);
  }

  const sections = ['Minimize', ` obj: ${objective.length > 0 ? expression(objective) : '0'}`, 'Subject To', ...rows];
  if (bounds.length > 0) sections.push('Bounds', ...bounds);
  if (generals.length > 0) sections.push('Generals', ` ${generals.join(' ')}`);
  if (binaries.length > 0) sections.push('Binaries', ` ${binaries.join(' ')}`);
  sections.push('End', '');
  return { text: sections.join('\n'), slacks, unmet, trades, gap: problem.value.times(MIP_GAP).toNumber() };
}

/**
 * Net orders (q_i by ISIN, zeros left out) of the solver's column values. Whole shares are rounded
 * to the nearest integer. Fractional shares go to 6 decimals in the direction that keeps the cash
 * constraint true: a buy down, a sell up (at most the holding); a value within 10⁻⁹ of a 6-decimal
 * number is that number.
 */
export function ordersOf(problem: Problem, value: (column: string) => number): Map<string, number> {
  const orders = new Map<string, number>();
  const scale = 10 ** SHARE_DECIMALS;
  problem.instruments.forEach((i, index) => {
    const { main, all } = columnsOf(problem, index, i);
    let net: number;
    if (problem.fractional) {
      const shares = main ? value(main.column) * scale : 0;
      const near = Math.round(shares);
      if (Math.abs(shares - near) <= 1e-3) net = near / scale;
      else if (shares > 0) net = Math.floor(shares) / scale;
      else net = -Math.ceil(-shares) / scale;
      if (net < -i.held) net = -i.held;
    } else {
      const m = main ? Math.round(value(main.column)) : 0;
      const sellsAll = all !== undefined && Math.round(value(all)) === 1;
      // A sale of everything is −h_i exactly (m_i − f_i in floating point may differ in its last bit).
      net = sellsAll ? (m === -Math.floor(i.held) ? -i.held : m - (i.held - Math.floor(i.held))) : m;
    }
    if (net !== 0) orders.set(i.isin, net);
  });
  return orders;
}

/** The result's orders: shares, the price used and t × p × |shares| rounded to cents. */
export function resultOrders(problem: Problem, orders: ReadonlyMap<string, number>): Record<string, OptimizerOrder> {
  const byIsin = new Map(problem.instruments.map((i) => [i.isin, i]));
  const result: Record<string, OptimizerOrder> = {};
  for (const [isin, shares] of orders) {
    const price = byIsin.get(isin)!.price;
    const cost = problem.costRate
      .times(fromNumber(price))
      .times(fromNumber(Math.abs(shares)))
      .toDecimalPlaces(2);
    result[isin] = { shares, expected_share_price: price, expected_transaction_cost: cost.toNumber() };
  }
  return result;
}

// ------------------------------------------------------------------ checks

/** What a constraint would need; `amount` is the shortfall (or excess) in the base currency. */
export function shortfall(problem: Problem, constraint: Relaxable, amount: Money): string {
  const cur = problem.currency;
  if (constraint.kind === 'cash') {
    const what = problem.divest.isZero()
      ? `cash buffer ${problem.cashBuffer}`
      : `cash buffer ${problem.cashBuffer} and divest amount ${money(problem.divest)} ${cur}`;
    return `${what} cannot be met: ${money(requiredCash(problem))} ${cur} needed in cash after trades, short by ${money(amount)} ${cur}`;
  }
  const { band } = constraint;
  if (constraint.kind === 'lower') {
    const bound = fromNumber(band.lower).times(problem.invested);
    return `asset class ${band.assetClass} lower bound ${band.lower} cannot be met: at least ${money(bound)} ${cur} needed, short by ${money(amount)} ${cur}`;
  }
  const bound = fromNumber(band.upper).times(problem.invested);
  return `asset class ${band.assetClass} upper bound ${band.upper} cannot be met: at most ${money(bound)} ${cur} allowed, over by ${money(amount)} ${cur}`;
}

/**
 * Every way `orders` (net shares by ISIN) break the model: unknown ISINs, buys outside the model
 * portfolio, short positions, shares that are not whole (or beyond 6 decimals when fractional;
 * selling a whole fractional holding is allowed), and, with a tolerance of one cent, the cash
 * constraint and every band. Empty when the orders are sound.
 */
export function checkOrders(problem: Problem, orders: ReadonlyMap<string, number>): string[] {
  const violations: string[] = [];
  const byIsin = new Map(problem.instruments.map((i) => [i.isin, i]));
  for (const [isin, shares] of orders) {
    const i = byIsin.get(isin);
    if (!i) {
      violations.push(`${isin} is not an instrument of the request`);
      continue;
    }
    if (!Number.isFinite(shares)) violations.push(`${isin}: ${shares} shares`);
    if (shares > 0 && !i.buyable) violations.push(`${isin} is bought but not in the model portfolio`);
    if (shares > 0 && problem.sellEverything) violations.push(`${isin} is bought although everything is to be sold`);
    if (fromNumber(i.held).plus(fromNumber(shares)).lt(ZERO)) violations.push(`${isin}: selling ${-shares} of ${i.held} shares leaves a short position`);
    const sellsAll = shares === -i.held;
    if (!problem.fractional && !Number.isInteger(shares) && !sellsAll) violations.push(`${isin}: ${shares} shares is not a whole number`);
    if (problem.fractional && !sellsAll && Number.isFinite(shares) && fromNumber(shares).decimalPlaces() > SHARE_DECIMALS)
      violations.push(`${isin}: ${shares} shares has more than ${SHARE_DECIMALS} decimals`);
  }
  if (problem.sellEverything) {
    for (const i of problem.instruments)
      if (i.held > 0 && orders.get(i.isin) !== -i.held) violations.push(`${i.isin} is not sold entirely although everything is to be sold`);
  }

  let traded = ZERO;
  let costs = ZERO;
  const after = new Map<string, Money>();
  for (const i of problem.instruments) {
    const shares = fromNumber(orders.get(i.isin) ?? 0);
    const price = fromNumber(i.price);
    traded = traded.plus(price.times(shares));
    costs = costs.plus(problem.costRate.times(price).times(shares.abs()));
    if (i.assetClass !== null) after.set(i.assetClass, (after.get(i.assetClass) ?? ZERO).plus(price.times(fromNumber(i.held).plus(shares))));
  }
  const cashAfter = problem.cash.minus(traded).minus(costs);
  const needed = requiredCash(problem);
  if (cashAfter.lt(needed.minus(CENT)))
    violations.push(`cash after trades ${money(cashAfter)} ${problem.currency} is below the ${money(needed)} ${problem.currency} required`);
  for (const band of problem.bands) {
    const held = after.get(band.assetClass) ?? ZERO;
    const lower = fromNumber(band.lower).times(problem.invested);
    const upper = fromNumber(band.upper).times(problem.invested);
    if (held.lt(lower.minus(CENT)))
      violations.push(
        `asset class ${band.assetClass} at ${money(held)} ${problem.currency} is below its lower bound ${band.lower} (${money(lower)} ${problem.currency})`,
      );
    if (held.gt(upper.plus(CENT)))
      violations.push(
        `asset class ${band.assetClass} at ${money(held)} ${problem.currency} is above its upper bound ${band.upper} (${money(upper)} ${problem.currency})`,
      );
  }
  return violations;
}
