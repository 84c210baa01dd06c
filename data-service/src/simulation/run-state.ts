// The memory of one simulation run, which the threads working on it share (pure allocation).
import type { Grid } from './grid.ts';
import type { SimulationInput } from './engine.ts';
import { blockStates } from './random.ts';
import { BLOCK_SIZE, type RunPlan } from './run-plan.ts';

/**
 * Everything a unit of a run reads and writes (run-plan.ts): over SharedArrayBuffers when threads
 * share the run, plain ArrayBuffers otherwise. Memory: 8 bytes × (scenarios + 2 × rows ×
 * scenarios + answer values) + 16 bytes a block: at most 2 × HALF_BYTES (16 MiB) of rows beyond
 * the scenarios' values and the answer (and dates × scenarios × 8 bytes more with keepPaths).
 */
export type RunArrays = {
  /** Each scenario's current value. */
  value: Float64Array;
  /** Each block's generator state, 4 words a block. */
  rng: Int32Array;
  /** Two halves of `rows` rows of every scenario's value at a sample date (half c mod 2 for chunk c). */
  rows: Float64Array;
  /** Value quantiles: `values[d * quantiles.length + q]`. */
  values: Float64Array;
  /** With keepPaths: `paths[d * scenarios + s]`. */
  paths?: Float64Array;
  /**
   * Word 0: each unit reads it first and adds to it last, with Atomics, which orders one unit's
   * writes before the next one's reads. Word 1: set when the run is stopped; later units do nothing.
   */
  sync: Int32Array;
};

export type Memory = 'local' | 'shared';

/** Allocates a run's arrays: every value at the start amount, each block's stream at its start, date 0 in its row. */
export function allocateRun(input: SimulationInput, grid: Grid, plan: RunPlan, memory: Memory): RunArrays {
  const N = input.scenarios;
  const buffer = (bytes: number) => (memory === 'shared' ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
  const floats = (count: number) => new Float64Array(buffer(8 * count));
  const dates = grid.sampleDays.length;
  const arrays: RunArrays = {
    value: floats(N),
    rng: blockStates(input.seed, plan.blocks, new Int32Array(buffer(16 * plan.blocks))),
    rows: floats(2 * plan.rows * N),
    values: floats(dates * input.quantiles.length),
    paths: input.keepPaths ? floats(dates * N) : undefined,
    sync: new Int32Array(buffer(8)),
  };
  arrays.value.fill(Math.max(0, input.startAmount + grid.deposit[0]!));
  arrays.rows.set(arrays.value, 0);
  arrays.paths?.set(arrays.value, 0);
  return arrays;
}

/** Marks a run stopped: units that start later return at once (a thread may hold one ahead). */
export const stopRun = (arrays: RunArrays) => Atomics.store(arrays.sync, 1, 1);

/** Offset in `rows` of sample date `date`, taken in chunk `chunk`. */
export const rowOffset = (plan: RunPlan, chunk: number, date: number, scenarios: number) =>
  ((chunk % 2) * plan.rows + date - plan.chunks[chunk]!.firstDate) * scenarios;

/** The scenarios of blocks firstBlock ≤ b < endBlock. */
export const blockScenarios = (firstBlock: number, endBlock: number, scenarios: number): [number, number] => [
  firstBlock * BLOCK_SIZE,
  Math.min(scenarios, endBlock * BLOCK_SIZE),
];
