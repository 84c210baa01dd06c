// Future performance: Monte Carlo simulation of a portfolio's value (pure; closes come as data).
import type { Frequency } from './dates.ts';
import { buildGrid, type Grid } from './grid.ts';
import type { MeanAndStdev } from './model.ts';
import { planRun, RunProgress } from './run-plan.ts';
import { allocateRun } from './run-state.ts';
import { UnitRunner } from './units.ts';

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

/**
 * Runs the scenarios on this thread: every unit of the run's plan in turn (run-plan.ts). The
 * worker threads of data-service/src/workers run the same units on shared memory and answer the
 * same bytes, whatever their number.
 *
 * Scenarios advance together one step at a time over typed arrays, block by block, each block
 * drawing from its own stream; every (scenario, step) is visited once and no per-scenario object
 * exists. Per step and scenario: class log returns x_i = μ_iΔt + σ_i√Δt·(Lε)_i, portfolio growth
 * G = Σ w_i·e^{x_i} (rebalanced to the weights every step), then V ← max(0, V·G + deposit).
 */
export function simulate(input: SimulationInput, grid: Grid = buildGrid(input)): SimulationOutput {
  const plan = planRun(grid, input.scenarios, input.weights.length);
  const arrays = allocateRun(input, grid, plan, 'local');
  const runner = new UnitRunner(input, grid, plan, arrays);
  const progress = new RunProgress(plan, 1);
  for (let unit = progress.next(); unit; unit = progress.next()) {
    runner.run(unit);
    progress.done(unit);
  }
  if (!progress.finished()) throw new Error('the run plan left units that cannot start');
  return { dates: grid.sampleDays, deposits: grid.cumulative, values: arrays.values, paths: arrays.paths };
}
