// Future performance: Monte Carlo simulation of a portfolio's value (pure; closes come as data).
import { DAYS_PER_YEAR, datesUpTo, type Frequency } from './dates.ts';
import { isDiagonal, logParameters, parametersAt, psdCholesky, type MeanAndStdev } from './model.ts';
import { QuantileWork, quantilesInto } from './quantiles.ts';
import { NormalSource } from './random.ts';

/** A checked simulation (see request.ts for the checks and model.ts for the model). */
export type SimulationInput = {
  /** Weights per asset class, summing to 1. */
  weights: Float64Array;
  /** Annual arithmetic mean and stdev per class: short-term and long-term. */
  shortTerm: readonly MeanAndStdev[];
  longTerm: readonly MeanAndStdev[];
  /** Years after the start at which the long-term parameters are reached. */
  cutOffYears: number;
  /** Row-major n×n correlation matrix (symmetric, unit diagonal, PSD); undefined: independent classes. */
  correlation?: Float64Array;
  /** Day numbers (days since 1970-01-01). */
  startDay: number;
  endDay: number;
  startAmount: number;
  /** Added at every date of `depositFrequency` from the start date on (negative: withdrawn). */
  depositAmount: number;
  depositFrequency: Frequency;
  sampleFrequency: Frequency;
  /** Probabilities in (0, 1), any order. */
  quantiles: readonly number[];
  scenarios: number;
  seed: number;
  /** Also return every scenario's value at every sample date (tests; memory: dates × scenarios). */
  keepPaths?: boolean;
};

export type SimulationOutput = {
  /** Sample dates (day numbers): the start, every `sampleFrequency` date after it, and the end. */
  dates: number[];
  /** Cumulative deposits (start amount included) at each sample date. */
  deposits: Float64Array;
  /** Value quantiles: `values[d * quantiles.length + q]` for sample date d and the q-th requested quantile. */
  values: Float64Array;
  /** With keepPaths: `paths[d * scenarios + s]`. */
  paths?: Float64Array;
};

/** The simulation's time grid: sample dates and deposit dates together. */
export type Grid = {
  days: Int32Array;
  /** Deposit made at each grid date (0 when none). */
  deposit: Float64Array;
  /** Index of the grid date in the sample dates, or −1. */
  sample: Int32Array;
  sampleDays: number[];
  /** Cumulative deposits at each sample date. */
  cumulative: Float64Array;
};

/**
 * Steps run on every date that is a sample date or a deposit date (the finer of both frequencies,
 * and exact when they do not nest, e.g. weekly deposits sampled monthly). The end date is always a
 * sample date; a deposit date after it is not simulated.
 */
export function buildGrid(
  input: Pick<SimulationInput, 'startDay' | 'endDay' | 'startAmount' | 'depositAmount' | 'depositFrequency' | 'sampleFrequency'>,
): Grid {
  const samples = datesUpTo(input.startDay, input.endDay, input.sampleFrequency);
  if (samples.at(-1) !== input.endDay) samples.push(input.endDay);
  const deposits = input.depositAmount === 0 ? [input.startDay] : datesUpTo(input.startDay, input.endDay, input.depositFrequency);
  const all = [...new Set([...samples, ...deposits])].sort((a, b) => a - b);
  const depositDays = new Set(deposits);
  const sampleIndex = new Map(samples.map((d, i) => [d, i]));
  const cumulative = new Float64Array(samples.length);
  const days = Int32Array.from(all);
  const deposit = new Float64Array(all.length);
  const sample = new Int32Array(all.length);
  let count = 0;
  for (let g = 0; g < all.length; g++) {
    const day = all[g]!;
    if (depositDays.has(day)) {
      deposit[g] = input.depositAmount;
      count++;
    }
    const s = sampleIndex.get(day);
    sample[g] = s ?? -1;
    // start + count × amount: one product, no running sum of binary fractions.
    if (s !== undefined) cumulative[s] = input.startAmount + count * input.depositAmount;
  }
  return { days, deposit, sample, sampleDays: samples, cumulative };
}

/** Steps (grid intervals) a simulation runs: its cost is scenarios × steps × classes. */
export const stepCount = (grid: Grid) => grid.days.length - 1;

/**
 * Runs the scenarios. Time runs in the outer loop and scenarios in the inner one, over one value
 * per scenario (a Float64Array), so each step draws its normals into one buffer, applies the same
 * per-step coefficients to every scenario, and a sample date takes its quantiles right away: every
 * (scenario, step) is visited once and no per-scenario object exists.
 *
 * Per step and scenario: class log returns x_i = μ_iΔt + σ_i√Δt·(Lε)_i, portfolio growth
 * G = Σ w_i·e^{x_i} (rebalanced to the weights every step), then V ← max(0, V·G + deposit).
 */
export function simulate(input: SimulationInput, grid = buildGrid(input)): SimulationOutput {
  const n = input.weights.length;
  const N = input.scenarios;
  const steps = stepCount(grid);
  const probabilities = Float64Array.from(new Set(input.quantiles)).sort();
  const nq = input.quantiles.length;
  const dates = grid.sampleDays;

  const l = input.correlation ? psdCholesky(input.correlation, n) : undefined;
  if (input.correlation && !l) throw new Error('correlation matrix is not positive semi-definite');
  const diagonal = !l || isDiagonal(l, n);

  const value = new Float64Array(N).fill(Math.max(0, input.startAmount + grid.deposit[0]!));
  const work = new QuantileWork(N, probabilities);
  const sorted = new Float64Array(probabilities.length);
  const values = new Float64Array(dates.length * nq);
  const paths = input.keepPaths ? new Float64Array(dates.length * N) : undefined;
  // Requested order → position among the sorted distinct probabilities.
  const position = input.quantiles.map((q) => probabilities.indexOf(q));
  const takeSample = (d: number) => {
    if (paths) paths.set(value, d * N);
    quantilesInto(value, work, sorted, 0);
    for (let q = 0; q < nq; q++) values[d * nq + q] = sorted[position[q]!]!;
  };
  takeSample(0);

  const normals = new NormalSource(input.seed);
  const eps = new Float64Array(N * n);
  const drift = new Float64Array(n);
  /** diag(σ√Δt)·L, row-major lower triangle (the diagonal alone when independent). */
  const a = new Float64Array(n * n);
  const w = input.weights;

  for (let k = 0; k < steps; k++) {
    const dt = (grid.days[k + 1]! - grid.days[k]!) / DAYS_PER_YEAR;
    const mid = ((grid.days[k]! + grid.days[k + 1]!) / 2 - input.startDay) / DAYS_PER_YEAR;
    for (let i = 0; i < n; i++) {
      const { mu, sigma } = logParameters(parametersAt(input.shortTerm[i]!, input.longTerm[i]!, input.cutOffYears, mid));
      drift[i] = mu * dt;
      const vol = sigma * Math.sqrt(dt);
      for (let j = 0; j <= i; j++) a[i * n + j] = vol * (l ? l[i * n + j]! : i === j ? 1 : 0);
    }
    const dep = grid.deposit[k + 1]!;
    normals.fill(eps, N * n);
    if (n === 1) stepOne(value, eps, drift[0]!, a[0]!, dep);
    else if (n === 2 && diagonal) stepTwo(value, eps, w, drift, a[0]!, 0, a[3]!, dep);
    else if (n === 2) stepTwo(value, eps, w, drift, a[0]!, a[2]!, a[3]!, dep);
    else if (diagonal) stepIndependent(value, eps, w, drift, a, n, dep);
    else stepCorrelated(value, eps, w, drift, a, n, dep);
    const d = grid.sample[k + 1]!;
    if (d >= 0) takeSample(d);
  }
  return { dates, deposits: grid.cumulative, values, paths };
}

// The kernels: one per shape, so that the inner loops have no loop over classes where none is needed.

function stepOne(value: Float64Array, eps: Float64Array, drift: number, vol: number, dep: number): void {
  for (let s = 0; s < value.length; s++) {
    const v = value[s]! * Math.exp(drift + vol * eps[s]!) + dep;
    value[s] = v > 0 ? v : 0;
  }
}

function stepTwo(value: Float64Array, eps: Float64Array, w: Float64Array, drift: Float64Array, a00: number, a10: number, a11: number, dep: number): void {
  const w0 = w[0]!;
  const w1 = w[1]!;
  const d0 = drift[0]!;
  const d1 = drift[1]!;
  for (let s = 0; s < value.length; s++) {
    const e0 = eps[2 * s]!;
    const g = w0 * Math.exp(d0 + a00 * e0) + w1 * Math.exp(d1 + a10 * e0 + a11 * eps[2 * s + 1]!);
    const v = value[s]! * g + dep;
    value[s] = v > 0 ? v : 0;
  }
}

function stepIndependent(value: Float64Array, eps: Float64Array, w: Float64Array, drift: Float64Array, a: Float64Array, n: number, dep: number): void {
  for (let s = 0; s < value.length; s++) {
    const base = s * n;
    let g = 0;
    for (let i = 0; i < n; i++) g += w[i]! * Math.exp(drift[i]! + a[i * n + i]! * eps[base + i]!);
    const v = value[s]! * g + dep;
    value[s] = v > 0 ? v : 0;
  }
}

function stepCorrelated(value: Float64Array, eps: Float64Array, w: Float64Array, drift: Float64Array, a: Float64Array, n: number, dep: number): void {
  for (let s = 0; s < value.length; s++) {
    const base = s * n;
    let g = 0;
    for (let i = 0; i < n; i++) {
      let x = drift[i]!;
      const row = i * n;
      for (let j = 0; j <= i; j++) x += a[row + j]! * eps[base + j]!;
      g += w[i]! * Math.exp(x);
    }
    const v = value[s]! * g + dep;
    value[s] = v > 0 ? v : 0;
  }
}
