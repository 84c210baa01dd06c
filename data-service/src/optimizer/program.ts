// The problem as a mixed-integer linear program in CPLEX LP text (the model in ./problem.ts), and
// the solver's values back as orders.
import { fromNumber } from '@platform/shared';
import { conversions } from './conversions.ts';
import { MIP_GAP, requiredCash, SHARE_DECIMALS, ZERO, type Band, type Instrument, type OptimizerOrder, type Problem } from './problem.ts';

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

  // Converting: per other currency k a column y_k ≥ n_k − a_k, y_k ≥ −n_k (n_k = Σ p_i q_i over its
  // instruments, a_k its cash), whose cost f·y_k is paid in cash and counted in the objective.
  const f = problem.fxRate.toNumber();
  if (f > 0) {
    problem.foreign.forEach(({ currency, cash }, k) => {
      const terms = problem.instruments.flatMap((i, index) => (i.currency === currency ? tradeValue[index]! : []));
      if (terms.length === 0) return;
      const y = `y${k}`;
      cashTerms.push([f, y]);
      if (!elastic) objective.push([f, y]);
      rows.push(` yb${k}: ${expression([[1, y], ...scaled(terms, -1)])} >= ${num(-cash.toNumber())}`);
      rows.push(` ys${k}: ${expression([[1, y], ...terms])} >= 0`);
    });
  }

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

/**
 * The result's orders: shares, the price used (base currency) and t × p × |shares| rounded to
 * cents; an instrument in another currency also its currency, its price there, the rate and its
 * share of the conversion's cost rounded to cents (conversions.ts).
 */
export function resultOrders(problem: Problem, orders: ReadonlyMap<string, number>): Record<string, OptimizerOrder> {
  const byIsin = new Map(problem.instruments.map((i) => [i.isin, i]));
  const result: Record<string, OptimizerOrder> = {};
  const fx = conversions(problem, orders).byIsin;
  for (const [isin, shares] of orders) {
    const i = byIsin.get(isin)!;
    const price = i.price;
    const cost = problem.costRate
      .times(fromNumber(price))
      .times(fromNumber(Math.abs(shares)))
      .toDecimalPlaces(2);
    result[isin] = { shares, expected_share_price: price, expected_transaction_cost: cost.toNumber() };
    // Orders in the base currency keep the fields they always had; the others say how they convert.
    if (i.currency !== problem.currency)
      Object.assign(result[isin], {
        currency: i.currency,
        expected_share_price_in_currency: i.localPrice,
        fx_rate: Number(i.rate),
        expected_fx_cost: (fx.get(isin) ?? ZERO).toDecimalPlaces(2).toNumber(),
      });
  }
  return result;
}
