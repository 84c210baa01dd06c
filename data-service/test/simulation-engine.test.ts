import assert from 'node:assert/strict';
import { datesUpTo, formatDay, nthDate, parseDay } from '../src/simulation/dates.ts';
import { simulate, type SimulationInput } from '../src/simulation/engine.ts';
import { arithmeticParameters, bandWeights, logParameters, parametersAt, psdCholesky, type MeanAndStdev } from '../src/simulation/model.ts';
import { QuantileWork, quantilesInto } from '../src/simulation/quantiles.ts';
import { NormalSource } from '../src/simulation/random.ts';

// The Monte Carlo engine in process (pure, no I/O): the model, the calendar, quantiles, and
// statistics of 100,000 scenarios against the model's analytic values.

const day = (text: string) => parseDay(text)!;
const EQUITY: MeanAndStdev = { mean: 0.07, stdev: 0.16 };
const BONDS: MeanAndStdev = { mean: 0.03, stdev: 0.05 };

/** The vendor's sample: EQUITY [0.8, 1] / FIXED_INCOME [0, 0.2], start 1000 plus 50 monthly. */
const VENDOR: SimulationInput = {
  weights: bandWeights([
    [0.8, 1],
    [0, 0.2],
  ])!,
  shortTerm: [EQUITY, BONDS],
  longTerm: [EQUITY, BONDS],
  cutOffYears: 10,
  startDay: day('2022-01-31'),
  endDay: day('2022-12-31'),
  startAmount: 1000,
  depositAmount: 50,
  depositFrequency: 'M',
  sampleFrequency: 'M',
  quantiles: [0.05, 0.5, 0.95],
  scenarios: 10_000,
  seed: 7,
};

/** One asset class, nothing but the start amount, sampled monthly: the scenarios' log growth. */
function singleClass(shortTerm: MeanAndStdev, longTerm: MeanAndStdev, cutOffYears: number, end: string, seed = 11): SimulationInput {
  return {
    weights: Float64Array.of(1),
    shortTerm: [shortTerm],
    longTerm: [longTerm],
    cutOffYears,
    startDay: day('2022-01-01'),
    endDay: day(end),
    startAmount: 1,
    depositAmount: 0,
    depositFrequency: 'M',
    sampleFrequency: 'M',
    quantiles: [0.5],
    scenarios: 100_000,
    seed,
    keepPaths: true,
  };
}

function meanAndStdev(values: ArrayLike<number>): { mean: number; stdev: number } {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  const mean = sum / values.length;
  let squares = 0;
  for (let i = 0; i < values.length; i++) squares += (values[i]! - mean) ** 2;
  return { mean, stdev: Math.sqrt(squares / (values.length - 1)) };
}

/** ln(V(to) / V(from)) of every scenario, from the kept paths. */
function logGrowth(out: ReturnType<typeof simulate>, scenarios: number, from: number, to: number): Float64Array {
  const paths = out.paths!;
  return Float64Array.from({ length: scenarios }, (_, s) => Math.log(paths[to * scenarios + s]! / paths[from * scenarios + s]!));
}

/** Checks a sample's mean and stdev against normal(μ, σ) within 3 standard errors each. */
function assertNormalMoments(sample: Float64Array, mu: number, sigma: number, what: string): void {
  const n = sample.length;
  const { mean, stdev } = meanAndStdev(sample);
  const seMean = sigma / Math.sqrt(n);
  const seStdev = sigma / Math.sqrt(2 * (n - 1));
  assert.ok(Math.abs(mean - mu) < 3 * seMean, `${what}: mean ${mean} vs ${mu} (3 SE = ${3 * seMean})`);
  assert.ok(Math.abs(stdev - sigma) < 3 * seStdev, `${what}: stdev ${stdev} vs ${sigma} (3 SE = ${3 * seStdev})`);
}

/**
 * The correlation of two classes' log returns implied by the variance of a 50/50 portfolio after
 * one step: Var(½e^X + ½e^Y) = ¼(Var e^X + Var e^Y) + ½·E e^X·E e^Y·(e^{ρσ²T} − 1) for equal σ.
 */
function impliedCorrelation(final: Float64Array, p: MeanAndStdev, years: number): number {
  const { mu, sigma } = logParameters(p);
  const { stdev } = meanAndStdev(final);
  const m = Math.exp((mu + (sigma * sigma) / 2) * years);
  const single = m * m * Math.expm1(sigma * sigma * years);
  const covariance = 2 * stdev * stdev - single;
  return Math.log1p(covariance / (m * m)) / (sigma * sigma * years);
}

describe('Monte Carlo engine', () => {
  describe('calendar', () => {
    it("steps months and years from the start date, keeping its day or the month's last day", () => {
      assert.deepEqual(datesUpTo(day('2022-01-31'), day('2022-05-31'), 'M').map(formatDay), [
        '2022-01-31',
        '2022-02-28',
        '2022-03-31',
        '2022-04-30',
        '2022-05-31',
      ]);
      assert.deepEqual(datesUpTo(day('2024-02-29'), day('2028-03-01'), 'Y').map(formatDay), [
        '2024-02-29',
        '2025-02-28',
        '2026-02-28',
        '2027-02-28',
        '2028-02-29',
      ]);
      assert.equal(formatDay(nthDate(day('2022-01-31'), 'W', 2)), '2022-02-14');
      assert.equal(formatDay(nthDate(day('2022-12-31'), 'D', 1)), '2023-01-01');
      assert.equal(parseDay('2022-02-30'), undefined);
      assert.equal(parseDay('2022-2-3'), undefined);
    });
  });

  describe('model', () => {
    it('converts annual arithmetic mean and stdev to log parameters and back', () => {
      const { mu, sigma } = logParameters(EQUITY);
      assert.ok(Math.abs(sigma ** 2 - Math.log(1 + 0.16 ** 2 / 1.07 ** 2)) < 1e-15);
      assert.ok(Math.abs(mu - (Math.log(1.07) - sigma ** 2 / 2)) < 1e-15);
      // E[e^X] = 1 + m, Var[e^X] = s².
      assert.ok(Math.abs(Math.exp(mu + sigma ** 2 / 2) - 1.07) < 1e-12);
      const back = arithmeticParameters(mu, sigma);
      assert.ok(Math.abs(back.mean - 0.07) < 1e-12 && Math.abs(back.stdev - 0.16) < 1e-12, JSON.stringify(back));
    });

    it('moves short-term parameters linearly to the long-term ones until the cut-off', () => {
      const st = { mean: 0.1, stdev: 0.3 };
      const lt = { mean: 0.04, stdev: 0.1 };
      assert.deepEqual(parametersAt(st, lt, 4, 0), st);
      const half = parametersAt(st, lt, 4, 2);
      assert.ok(Math.abs(half.mean - 0.07) < 1e-15 && Math.abs(half.stdev - 0.2) < 1e-15);
      assert.deepEqual(parametersAt(st, lt, 4, 4), lt);
      assert.deepEqual(parametersAt(st, lt, 4, 9), lt);
      assert.deepEqual(parametersAt(st, lt, 0, 0), lt);
    });

    it("weights are the bands' midpoints normalised to 1", () => {
      assert.deepEqual(
        Array.from(
          bandWeights([
            [0.8, 1],
            [0, 0.2],
          ])!,
        ),
        [0.9, 0.1],
      );
      const w = bandWeights([
        [0.2, 0.4],
        [0.2, 0.4],
      ])!;
      assert.deepEqual(Array.from(w), [0.5, 0.5]);
      assert.equal(bandWeights([[0, 0]]), undefined);
    });

    it('factors positive semi-definite correlation matrices, singular ones too, and refuses the rest', () => {
      const check = (c: number[], n: number) => {
        const l = psdCholesky(Float64Array.from(c), n)!;
        assert.ok(l, `factors ${c}`);
        for (let i = 0; i < n; i++) {
          for (let j = 0; j < n; j++) {
            let sum = 0;
            for (let k = 0; k < n; k++) sum += l[i * n + k]! * l[j * n + k]!;
            assert.ok(Math.abs(sum - c[i * n + j]!) < 1e-12, `L·Lᵀ = C at ${i},${j}`);
          }
        }
      };
      check([1, 0.3, 0.3, 1], 2);
      check([1, 1, 1, 1], 2);
      check([1, 1, 0.5, 1, 1, 0.5, 0.5, 0.5, 1], 3);
      check([1, -1, 0, -1, 1, 0, 0, 0, 1], 3);
      assert.equal(psdCholesky(Float64Array.from([1, 0.9, 0.9, 0.9, 1, -0.9, 0.9, -0.9, 1]), 3), undefined);
      assert.equal(psdCholesky(Float64Array.from([1, 1, 0, 1, 1, 1, 0, 1, 1]), 3), undefined);
    });
  });

  describe('random numbers and quantiles', () => {
    it('draws standard normals: mean, variance, tails', () => {
      const x = new Float64Array(1_000_000);
      new NormalSource(3).fill(x);
      const { mean, stdev } = meanAndStdev(x);
      assert.ok(Math.abs(mean) < 3 / 1000, `mean ${mean}`);
      assert.ok(Math.abs(stdev - 1) < 3 / Math.sqrt(2e6), `stdev ${stdev}`);
      const beyond = (t: number) => x.filter((v) => Math.abs(v) > t).length / x.length;
      // P(|Z| > 2) = 0.0455, P(|Z| > 3) = 0.0027, P(|Z| > 4) = 6.3e-5.
      assert.ok(Math.abs(beyond(2) - 0.0455) < 0.001, `P(|Z| > 2) ${beyond(2)}`);
      assert.ok(Math.abs(beyond(3) - 0.0027) < 0.0003, `P(|Z| > 3) ${beyond(3)}`);
      assert.ok(beyond(4) > 2e-5 && beyond(4) < 1.2e-4, `P(|Z| > 4) ${beyond(4)}`);
    });

    it('gives the same numbers for the same seed and others for another', () => {
      const [a, b, c] = [new Float64Array(1000), new Float64Array(1000), new Float64Array(1000)];
      new NormalSource(42).fill(a);
      new NormalSource(42).fill(b);
      new NormalSource(43).fill(c);
      assert.deepEqual(a, b);
      assert.notDeepEqual(a, c);
    });

    it('interpolates quantiles linearly between order statistics, as sorting does', () => {
      const reference = (values: Float64Array, p: number) => {
        const sorted = Float64Array.from(values).sort();
        const h = (sorted.length - 1) * p;
        const lo = Math.floor(h);
        return sorted[lo]! + (h - lo) * (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!);
      };
      const normals = new Float64Array(5000);
      new NormalSource(5).fill(normals);
      const cases: [string, Float64Array][] = [
        ['log-normal', normals.map((z) => 1000 * Math.exp(0.5 * z))],
        ['ties and zeros', normals.map((z) => Math.max(0, Math.round(z * 3)))],
        ['all equal', new Float64Array(5000).fill(1050)],
        ['one value', Float64Array.of(12.5)],
        ['two values', Float64Array.of(3, 1)],
        ['wide range', normals.map((z) => Math.exp(20 * z))],
        ['negative', normals.slice()],
      ];
      for (const probabilities of [[0.05, 0.5, 0.95], Array.from({ length: 99 }, (_, i) => (i + 1) / 100), [0.0001, 0.9999]]) {
        for (const [name, values] of cases) {
          const before = Float64Array.from(values);
          const p = Float64Array.from(probabilities);
          const out = new Float64Array(p.length);
          quantilesInto(values, new QuantileWork(values.length, p), out, 0);
          for (let q = 0; q < p.length; q++) assert.equal(out[q], reference(values, p[q]!), `${name} at ${p[q]}`);
          assert.deepEqual(values, before, 'the values are left as they were');
        }
      }
    });
  });

  describe("the vendor's sample", () => {
    it('starts at 1050 in every quantile, deposits 50 a month up to 600, and keeps quantiles ordered', () => {
      const out = simulate(VENDOR);
      assert.deepEqual(out.dates.map(formatDay), [
        '2022-01-31',
        '2022-02-28',
        '2022-03-31',
        '2022-04-30',
        '2022-05-31',
        '2022-06-30',
        '2022-07-31',
        '2022-08-31',
        '2022-09-30',
        '2022-10-31',
        '2022-11-30',
        '2022-12-31',
      ]);
      // Cumulative deposits include the start amount: 1050 on the start date, then 50 more a month.
      assert.deepEqual(Array.from(out.deposits), [1050, 1100, 1150, 1200, 1250, 1300, 1350, 1400, 1450, 1500, 1550, 1600]);
      assert.deepEqual(
        Array.from(out.deposits, (d) => d - 1000),
        [50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 600],
      );
      assert.deepEqual(Array.from(out.values.subarray(0, 3)), [1050, 1050, 1050]);
      for (let d = 1; d < out.dates.length; d++) {
        const [q05, q50, q95] = out.values.subarray(3 * d, 3 * d + 3);
        assert.ok(q05! < q50! && q50! < q95!, `ordered on ${formatDay(out.dates[d]!)}`);
        // 90 % equity at 16 % volatility: the median stays near the deposits.
        assert.ok(Math.abs(q50! / out.deposits[d]! - 1) < 0.1, `median ${q50} near deposits ${out.deposits[d]}`);
      }
    });

    it('answers byte-identical numbers for the same seed and others for another seed', () => {
      const a = simulate(VENDOR);
      const b = simulate(VENDOR);
      assert.deepEqual(Buffer.from(a.values.buffer), Buffer.from(b.values.buffer));
      assert.notDeepEqual(Array.from(simulate({ ...VENDOR, seed: 8 }).values), Array.from(a.values));
    });

    it('samples the end date even when it is not a sample date, and deposits on deposit dates between samples', () => {
      const out = simulate({ ...VENDOR, sampleFrequency: 'Y', depositFrequency: 'W', endDay: day('2023-03-15') });
      assert.deepEqual(out.dates.map(formatDay), ['2022-01-31', '2023-01-31', '2023-03-15']);
      // Weekly from 2022-01-31: 53 deposits up to 2023-01-30, 59 up to 2023-03-13.
      assert.deepEqual(Array.from(out.deposits), [1050, 1000 + 53 * 50, 1000 + 59 * 50]);
    });
  });

  describe('statistics of 100,000 scenarios', () => {
    it('one year of one asset class: log growth has the analytic mean and stdev (within 3 standard errors)', () => {
      const p = { mean: 0.07, stdev: 0.2 };
      const out = simulate(singleClass(p, p, 0, '2023-01-01'));
      assert.equal(out.dates.length, 13);
      const years = 365 / 365.25;
      const { mu, sigma } = logParameters(p);
      assertNormalMoments(logGrowth(out, 100_000, 0, 12), mu * years, sigma * Math.sqrt(years), 'one year');
    });

    it('moves to the long-term distribution: the year after the cut-off has the long-term parameters', () => {
      const st = { mean: 0.12, stdev: 0.3 };
      const lt = { mean: 0.04, stdev: 0.1 };
      const out = simulate(singleClass(st, lt, 1, '2024-01-01'));
      assert.equal(formatDay(out.dates[12]!), '2023-01-01');
      // Year 1: the sum over its monthly steps of the parameters at each step's middle.
      let mean1 = 0;
      let variance1 = 0;
      for (let k = 0; k < 12; k++) {
        const [from, to] = [out.dates[k]! - out.dates[0]!, out.dates[k + 1]! - out.dates[0]!];
        const { mu, sigma } = logParameters(parametersAt(st, lt, 1, (from + to) / 2 / 365.25));
        mean1 += (mu * (to - from)) / 365.25;
        variance1 += (sigma * sigma * (to - from)) / 365.25;
      }
      assertNormalMoments(logGrowth(out, 100_000, 0, 12), mean1, Math.sqrt(variance1), 'year 1 (transition)');
      const { mu, sigma } = logParameters(lt);
      const years = 365 / 365.25;
      assertNormalMoments(logGrowth(out, 100_000, 12, 24), mu * years, sigma * Math.sqrt(years), 'year 2 (long-term)');
      // Year 1 lies between the two: its volatility is clearly above the long-term one.
      assert.ok(Math.sqrt(variance1) > 1.5 * sigma * Math.sqrt(years));
    });

    it('reproduces the correlation of two asset classes, and of each pair of three', () => {
      const p = { mean: 0.06, stdev: 0.2 };
      const run = (weights: number[], correlation: number[]) => {
        const n = weights.length;
        const out = simulate({
          weights: Float64Array.from(weights),
          shortTerm: Array(n).fill(p),
          longTerm: Array(n).fill(p),
          cutOffYears: 0,
          correlation: Float64Array.from(correlation),
          startDay: day('2022-01-01'),
          endDay: day('2023-01-01'),
          startAmount: 1,
          depositAmount: 0,
          depositFrequency: 'Y',
          sampleFrequency: 'Y',
          quantiles: [0.5],
          scenarios: 100_000,
          seed: 2,
          keepPaths: true,
        });
        assert.equal(out.dates.length, 2, 'one step');
        return impliedCorrelation(out.paths!.subarray(100_000), p, 365 / 365.25);
      };
      // The standard error of this estimate is below 0.01 at 100,000 scenarios.
      for (const rho of [0.6, -0.4, 0]) {
        const estimate = run([0.5, 0.5], [1, rho, rho, 1]);
        assert.ok(Math.abs(estimate - rho) < 0.03, `ρ = ${rho}: ${estimate}`);
      }
      const three = [1, 0.5, -0.3, 0.5, 1, 0.2, -0.3, 0.2, 1];
      const pairs: [number[], number][] = [
        [[0.5, 0.5, 0], 0.5],
        [[0.5, 0, 0.5], -0.3],
        [[0, 0.5, 0.5], 0.2],
      ];
      for (const [weights, rho] of pairs) {
        const estimate = run(weights, three);
        assert.ok(Math.abs(estimate - rho) < 0.03, `weights ${weights}: ρ ${rho} vs ${estimate}`);
      }
      const independent = run([0.5, 0, 0.5], [1, 0, 0, 0, 1, 0, 0, 0, 1]);
      assert.ok(Math.abs(independent) < 0.03, `independent: ${independent}`);
    });

    it('floors the value at zero when withdrawals exceed it', () => {
      const p = { mean: 0.05, stdev: 0.1 };
      const out = simulate({
        ...singleClass(p, p, 0, '2024-01-01'),
        startAmount: 1000,
        depositAmount: -100,
        scenarios: 1000,
        keepPaths: true,
        quantiles: [0.05, 0.5, 0.95],
      });
      assert.ok(out.paths!.every((v) => v >= 0));
      assert.deepEqual(Array.from(out.values.subarray(-3)), [0, 0, 0]);
      assert.equal(out.deposits.at(-1), 1000 - 25 * 100);
    });
  });
});
