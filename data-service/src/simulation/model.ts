/**
 * The Monte Carlo model's arithmetic (docs/adr/0015-simulation-model.md), pure.
 *
 * Returns of an asset class are log-normal. Its parameters are given as the annual arithmetic mean
 * m and standard deviation s of simple returns; the log return of a year is then normal with
 *
 *   σ_y² = ln(1 + s² / (1 + m)²)        μ_y = ln(1 + m) − σ_y² / 2
 *
 * (so that E[e^X] = 1 + m and Var[e^X] = s²; the −σ²/2 is the convexity correction), and over a step
 * of Δt years the log return is normal with mean μ_y·Δt and standard deviation σ_y·√Δt. Correlated
 * classes draw z = L·ε with L·Lᵀ the correlation matrix and ε independent standard normals.
 *
 * Short-term parameters move linearly to the long-term ones: at t years after the start (the
 * middle of a step) m(t) = m_st + (m_lt − m_st)·min(1, t / T), likewise s(t), with T the
 * transition cut-off (T = 0: long-term from the start).
 */

export type MeanAndStdev = { mean: number; stdev: number };

/** Annual log parameters (μ_y, σ_y) of an annual arithmetic mean and stdev; needs m > −1. */
export function logParameters(p: MeanAndStdev): { mu: number; sigma: number } {
  const g = 1 + p.mean;
  const variance = Math.log(1 + (p.stdev * p.stdev) / (g * g));
  return { mu: Math.log(g) - variance / 2, sigma: Math.sqrt(variance) };
}

/** The inverse of logParameters: annual arithmetic mean and stdev of annual log parameters. */
export function arithmeticParameters(mu: number, sigma: number): MeanAndStdev {
  const variance = sigma * sigma;
  const mean = Math.exp(mu + variance / 2) - 1;
  return { mean, stdev: (1 + mean) * Math.sqrt(Math.expm1(variance)) };
}

/** The parameters t years after the start: linear from short- to long-term, long-term from `cutOffYears` on. */
export function parametersAt(shortTerm: MeanAndStdev, longTerm: MeanAndStdev, cutOffYears: number, t: number): MeanAndStdev {
  const f = cutOffYears <= 0 ? 1 : Math.min(1, Math.max(0, t / cutOffYears));
  return { mean: shortTerm.mean + (longTerm.mean - shortTerm.mean) * f, stdev: shortTerm.stdev + (longTerm.stdev - shortTerm.stdev) * f };
}

/** Weights of `[lower, upper]` bands: each band's midpoint, normalised to sum to 1 (undefined when all are 0). */
export function bandWeights(bands: readonly (readonly [number, number])[]): Float64Array | undefined {
  const w = Float64Array.from(bands, ([lower, upper]) => (lower + upper) / 2);
  const sum = w.reduce((a, b) => a + b, 0);
  if (!(sum > 0)) return undefined;
  for (let i = 0; i < w.length; i++) w[i]! /= sum;
  return w;
}

/**
 * L with L·Lᵀ = C for a symmetric positive semi-definite n×n matrix C (row-major), or undefined
 * when C is not positive semi-definite. Cholesky that tolerates singular matrices: a pivot within
 * `tolerance` of 0 gives a zero column, which is only consistent when the rest of that column is
 * also (near) 0; a clearly negative pivot or an inconsistent column means an eigenvalue below 0.
 * (Correlation 1 between two classes is singular and fine: both draw the same shock.)
 */
export function psdCholesky(c: Float64Array, n: number, tolerance = 1e-10): Float64Array | undefined {
  const l = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    let d = c[j * n + j]!;
    for (let k = 0; k < j; k++) d -= l[j * n + k]! ** 2;
    if (d < -tolerance) return undefined;
    if (d <= tolerance) {
      for (let i = j + 1; i < n; i++) {
        let r = c[i * n + j]!;
        for (let k = 0; k < j; k++) r -= l[i * n + k]! * l[j * n + k]!;
        if (Math.abs(r) > Math.sqrt(tolerance)) return undefined;
      }
      continue;
    }
    const root = Math.sqrt(d);
    l[j * n + j] = root;
    for (let i = j + 1; i < n; i++) {
      let r = c[i * n + j]!;
      for (let k = 0; k < j; k++) r -= l[i * n + k]! * l[j * n + k]!;
      l[i * n + j] = r / root;
    }
  }
  return l;
}

/** True when the lower-triangular `l` has nothing off its diagonal (independent classes). */
export function isDiagonal(l: Float64Array, n: number): boolean {
  for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) if (l[i * n + j] !== 0) return false;
  return true;
}
