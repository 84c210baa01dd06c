/**
 * The money-weighted return: the annual rate r at which the investor's cash flows are worth
 * nothing today, Σ c_k (1 + r)^(−y_k) = 0, with y_k the years (days / 365, as spreadsheets' XIRR)
 * from the first flow. Newton's method from 10 %; when it leaves (−1, ∞) or does not settle in 50
 * steps, bisection on a bracket where the sum changes sign. Null when there is no such rate: flows
 * all of one sign, or all on one day.
 */
export function xirr(amounts: ArrayLike<number>, years: ArrayLike<number>): number | null {
  const n = amounts.length;
  let positive = false;
  let negative = false;
  let first = Infinity;
  let last = -Infinity;
  for (let k = 0; k < n; k++) {
    if (amounts[k]! > 0) positive = true;
    if (amounts[k]! < 0) negative = true;
    if (amounts[k] !== 0) [first, last] = [Math.min(first, years[k]!), Math.max(last, years[k]!)];
  }
  // Flows all on one day are worth nothing at every rate (or at none): no rate to give.
  if (!positive || !negative || last === first) return null;
  const npv = (r: number) => {
    let sum = 0;
    for (let k = 0; k < n; k++) sum += amounts[k]! * Math.pow(1 + r, -years[k]!);
    return sum;
  };
  let r = 0.1;
  for (let step = 0; step < 50; step++) {
    let f = 0;
    let df = 0;
    for (let k = 0; k < n; k++) {
      const discount = Math.pow(1 + r, -years[k]!);
      f += amounts[k]! * discount;
      df -= (years[k]! * amounts[k]! * discount) / (1 + r);
    }
    if (df === 0 || !Number.isFinite(df)) break;
    const next = r - f / df;
    if (!(next > -1) || !Number.isFinite(next)) break;
    if (Math.abs(next - r) <= 1e-12 * Math.max(1, Math.abs(r))) return next;
    r = next;
  }
  return bisect(npv);
}

function bisect(npv: (r: number) => number): number | null {
  let lo = -1 + 1e-9;
  let hi = 1;
  let fLo = npv(lo);
  let fHi = npv(hi);
  while (Math.sign(fHi) === Math.sign(fLo) && hi < 1e9) {
    lo = hi;
    fLo = fHi;
    hi *= 10;
    fHi = npv(hi);
  }
  if (Math.sign(fHi) === Math.sign(fLo)) return null;
  for (let step = 0; step < 200 && hi - lo > 1e-12 * Math.max(1, Math.abs(lo)); step++) {
    const mid = (lo + hi) / 2;
    const fMid = npv(mid);
    if (fMid === 0) return mid;
    if (Math.sign(fMid) === Math.sign(fLo)) {
      lo = mid;
      fLo = fMid;
    } else hi = mid;
  }
  return (lo + hi) / 2;
}
