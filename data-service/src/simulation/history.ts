import { UnknownValue } from '../domain/errors.ts';
import { DAYS_PER_YEAR } from './dates.ts';
import { arithmeticParameters, type MeanAndStdev } from './model.ts';

/** Fewest common closes of the mapped instruments (60 daily returns, about three months of trading). */
export const MIN_CLOSES = 61;

/** Closes of several instruments on the dates where every one of them has a close, oldest first. */
export type CommonCloses = {
  /** Day numbers (days since 1970-01-01), ascending. */
  days: Int32Array;
  /** One series per instrument, aligned with `days`. */
  closes: Float64Array[];
  /** Closes each instrument has in all (0: unknown to the reference data), to say which one falls short. */
  available: number[];
};

export type HistoricalParameters = { parameters: MeanAndStdev[]; correlation: Float64Array };

/**
 * Annual parameters of each instrument's price history, for historical mode: daily log returns
 * r_t = ln(c_t / c_{t−1}) over the dates the instruments share, with sample mean r̄, variance v and
 * covariances; annualised by the observed number of returns per year P = returns / (calendar years
 * from the first to the last date), μ_y = r̄·P, σ_y² = v·P; then turned into the annual arithmetic
 * mean and stdev the model takes (m = e^{μ_y + σ_y²/2} − 1, s = (1 + m)·√(e^{σ_y²} − 1)), so the
 * simulation's log returns have exactly μ_y and σ_y. Correlations are those of the log returns
 * (0 with an instrument whose price moved at a constant rate).
 *
 * An instrument without prices, or too few common dates, is a 422 `unknown_field` at
 * `asset_class_mapping.<class>`.
 */
export function estimateFromHistory(classes: readonly string[], isins: readonly string[], history: CommonCloses): HistoricalParameters {
  const n = classes.length;
  history.available.forEach((count, i) => {
    const loc = ['body', 'asset_class_mapping', classes[i]!];
    if (count === 0) throw new UnknownValue(loc, `no price history for instrument ${isins[i]}`);
    if (count < MIN_CLOSES) throw new UnknownValue(loc, `instrument ${isins[i]} has ${count} closes; historical returns need at least ${MIN_CLOSES}`);
  });
  const t = history.days.length;
  if (t < MIN_CLOSES) {
    const shortest = history.available.indexOf(Math.min(...history.available));
    throw new UnknownValue(
      ['body', 'asset_class_mapping', classes[shortest]!],
      `the instruments ${isins.join(', ')} share ${t} dates with a close; historical returns need at least ${MIN_CLOSES}`,
    );
  }
  const returns = history.closes.map((c) => {
    const r = new Float64Array(t - 1);
    for (let k = 1; k < t; k++) r[k - 1] = Math.log(c[k]! / c[k - 1]!);
    return r;
  });
  const count = t - 1;
  const perYear = count / ((history.days[t - 1]! - history.days[0]!) / DAYS_PER_YEAR);
  const means = returns.map((r) => r.reduce((a, b) => a + b, 0) / count);
  const covariance = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = 0;
      const [ri, rj, mi, mj] = [returns[i]!, returns[j]!, means[i]!, means[j]!];
      for (let k = 0; k < count; k++) sum += (ri[k]! - mi) * (rj[k]! - mj);
      covariance[i * n + j] = covariance[j * n + i] = sum / (count - 1);
    }
  }
  // A price that grows at a constant rate has log returns equal up to rounding: no volatility
  // (below 1e-9 a year), and no correlation with anything.
  for (let i = 0; i < n; i++) {
    if (covariance[i * n + i]! * perYear < 1e-18) for (let j = 0; j < n; j++) covariance[i * n + j] = covariance[j * n + i] = 0;
  }
  const parameters = means.map((mean, i) => arithmeticParameters(mean * perYear, Math.sqrt(covariance[i * n + i]! * perYear)));
  const correlation = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const scale = Math.sqrt(covariance[i * n + i]! * covariance[j * n + j]!);
      correlation[i * n + j] = i === j ? 1 : scale > 0 ? Math.max(-1, Math.min(1, covariance[i * n + j]! / scale)) : 0;
    }
  }
  return { parameters, correlation };
}
