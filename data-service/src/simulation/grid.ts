// The time grid of a simulation: its sample dates and deposit dates together (pure).
import { datesUpTo, type Frequency } from './dates.ts';

export type GridRequest = {
  /** Day numbers (days since 1970-01-01). */
  startDay: number;
  endDay: number;
  startAmount: number;
  depositAmount: number;
  depositFrequency: Frequency;
  sampleFrequency: Frequency;
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
export function buildGrid(input: GridRequest): Grid {
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
