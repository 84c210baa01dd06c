import { parseDay } from '../src/simulation/dates.ts';
import type { SimulationInput } from '../src/simulation/engine.ts';

// Simulations of every shape the engine has a kernel for, and of every way a run is cut into
// chunks: shared by the tests that compare answers across threads and orders of work.

const day = (text: string) => parseDay(text)!;
const EQUITY = { mean: 0.07, stdev: 0.16 };
const BONDS = { mean: 0.03, stdev: 0.05 };
const GOLD = { mean: 0.04, stdev: 0.2 };

const common = {
  cutOffYears: 2,
  startDay: day('2022-01-31'),
  startAmount: 1000,
  depositAmount: 50,
  depositFrequency: 'M',
  sampleFrequency: 'M',
  quantiles: [0.05, 0.5, 0.95],
  seed: 7,
} as const;

export const SHAPES: { name: string; input: SimulationInput }[] = [
  {
    name: "the vendor's sample: 2 correlated classes, 2,000 scenarios, monthly",
    input: {
      ...common,
      weights: Float64Array.of(0.9, 0.1),
      shortTerm: [EQUITY, BONDS],
      longTerm: [EQUITY, BONDS],
      correlation: Float64Array.of(1, 0.2, 0.2, 1),
      endDay: day('2022-12-31'),
      scenarios: 2000,
    },
  },
  {
    name: '1 class, 1,001 scenarios (a partial last block), 8 years daily: chunks end when their rows fill half the row buffer, kept paths',
    input: {
      ...common,
      weights: Float64Array.of(1),
      shortTerm: [EQUITY],
      longTerm: [BONDS],
      endDay: day('2030-01-31'),
      sampleFrequency: 'D',
      scenarios: 1001,
      keepPaths: true,
    },
  },
  {
    name: '2 independent classes, 100 scenarios (one block), weekly deposits sampled yearly',
    input: {
      ...common,
      weights: Float64Array.of(0.5, 0.5),
      shortTerm: [EQUITY, BONDS],
      longTerm: [EQUITY, BONDS],
      endDay: day('2027-03-15'),
      depositFrequency: 'W',
      sampleFrequency: 'Y',
      scenarios: 100,
    },
  },
  {
    name: '3 correlated classes, 3,000 scenarios, daily deposits sampled yearly: chunks end at 2 million cells, some without a sample date; quantiles in any order and repeated',
    input: {
      ...common,
      weights: Float64Array.of(0.5, 0.3, 0.2),
      shortTerm: [EQUITY, BONDS, GOLD],
      longTerm: [BONDS, BONDS, GOLD],
      correlation: Float64Array.of(1, 0.5, -0.3, 0.5, 1, 0.2, -0.3, 0.2, 1),
      endDay: day('2025-01-31'),
      depositFrequency: 'D',
      sampleFrequency: 'Y',
      quantiles: [0.9, 0.1, 0.5, 0.1],
      scenarios: 3000,
    },
  },
  {
    name: '3 independent classes, withdrawals down to 0',
    input: {
      ...common,
      weights: Float64Array.of(0.4, 0.4, 0.2),
      shortTerm: [EQUITY, BONDS, GOLD],
      longTerm: [EQUITY, BONDS, GOLD],
      endDay: day('2026-01-31'),
      depositAmount: -40,
      scenarios: 700,
      keepPaths: true,
    },
  },
  {
    name: '1 class, 60,000 scenarios: 17 rows a chunk',
    input: {
      ...common,
      weights: Float64Array.of(1),
      shortTerm: [GOLD],
      longTerm: [GOLD],
      endDay: day('2024-01-31'),
      scenarios: 60_000,
    },
  },
];
