/**
 * One step of the scenarios `from` ≤ s < `to` (pure): class log returns x_i = drift_i + (A·ε)_i with
 * A = diag(σ√Δt)·L, portfolio growth G = Σ w_i·e^{x_i} (rebalanced to the weights every step),
 * then V ← max(0, V·G + deposit). `eps` holds the scenarios' normals from index 0, `n` per scenario.
 * One kernel per shape, so that the inner loops have no loop over classes where none is needed.
 */

export function stepOne(value: Float64Array, from: number, to: number, eps: Float64Array, drift: number, vol: number, dep: number): void {
  for (let s = from, e = 0; s < to; s++, e++) {
    const v = value[s]! * Math.exp(drift + vol * eps[e]!) + dep;
    value[s] = v > 0 ? v : 0;
  }
}

export function stepTwo(
  value: Float64Array,
  from: number,
  to: number,
  eps: Float64Array,
  w: Float64Array,
  drift: Float64Array,
  a00: number,
  a10: number,
  a11: number,
  dep: number,
): void {
  const w0 = w[0]!;
  const w1 = w[1]!;
  const d0 = drift[0]!;
  const d1 = drift[1]!;
  for (let s = from, e = 0; s < to; s++, e += 2) {
    const e0 = eps[e]!;
    const g = w0 * Math.exp(d0 + a00 * e0) + w1 * Math.exp(d1 + a10 * e0 + a11 * eps[e + 1]!);
    const v = value[s]! * g + dep;
    value[s] = v > 0 ? v : 0;
  }
}

export function stepIndependent(
  value: Float64Array,
  from: number,
  to: number,
  eps: Float64Array,
  w: Float64Array,
  drift: Float64Array,
  a: Float64Array,
  n: number,
  dep: number,
): void {
  for (let s = from, base = 0; s < to; s++, base += n) {
    let g = 0;
    for (let i = 0; i < n; i++) g += w[i]! * Math.exp(drift[i]! + a[i * n + i]! * eps[base + i]!);
    const v = value[s]! * g + dep;
    value[s] = v > 0 ? v : 0;
  }
}

export function stepCorrelated(
  value: Float64Array,
  from: number,
  to: number,
  eps: Float64Array,
  w: Float64Array,
  drift: Float64Array,
  a: Float64Array,
  n: number,
  dep: number,
): void {
  for (let s = from, base = 0; s < to; s++, base += n) {
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
