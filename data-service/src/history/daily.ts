import type { Timeline } from './timeline.ts';

/** Every day's figures of the period in the base currency, unrounded (docs/adr/0058-portfolio-history.md). */
export type DailySeries = {
  value: Float64Array;
  cash: Float64Array;
  /** Deposits minus withdrawals since the first day (0 on it). */
  netDeposits: Float64Array;
  /** Time-weighted index, 1 on the first day: the cumulative TWR is `index − 1`. */
  index: Float64Array;
  /** The index over its running peak, minus 1 (0 at a peak, negative below it). */
  drawdown: Float64Array;
};

/**
 * The value of the holdings in force at the end of each day, and the time-weighted return chained
 * from daily returns r_t = (V_t − F_t) / V_{t−1} − 1, the flow F_t counted at the end of its day. A
 * day after a day worth nothing (before the first deposit, after everything was withdrawn) has no
 * return: r_t = 0, so the first funded day starts the chain.
 */
export function dailySeries(timeline: Timeline): DailySeries {
  const { days, unitValues, isCash, units, versionOf, flows } = timeline;
  const n = days.length;
  const width = unitValues.length;
  const value = new Float64Array(n);
  const cash = new Float64Array(n);
  const netDeposits = new Float64Array(n);
  const index = new Float64Array(n);
  const drawdown = new Float64Array(n);
  let peak = 1;
  for (let t = 0; t < n; t++) {
    const v = versionOf[t]!;
    let total = 0;
    let held = 0;
    if (v >= 0) {
      const row = v * width;
      for (let c = 0; c < width; c++) {
        const u = units[row + c]!;
        if (u === 0) continue;
        const x = u * unitValues[c]![t]!;
        total += x;
        if (isCash[c]) held += x;
      }
    }
    value[t] = total;
    cash[t] = held;
    if (t === 0) {
      index[0] = 1;
    } else {
      netDeposits[t] = netDeposits[t - 1]! + flows[t]!;
      const previous = value[t - 1]!;
      index[t] = previous > 0 ? (index[t - 1]! * (total - flows[t]!)) / previous : index[t - 1]!;
    }
    if (index[t]! > peak) peak = index[t]!;
    drawdown[t] = index[t]! / peak - 1;
  }
  return { value, cash, netDeposits, index, drawdown };
}
