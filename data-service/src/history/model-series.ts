import { monthOf } from './calendar.ts';
import type { Timeline } from './timeline.ts';

/** The model's value and time-weighted index on every day, as DailySeries has them. */
export type ModelSeries = { value: Float64Array; index: Float64Array };

/**
 * The model portfolio (docs/adr/0058-portfolio-history.md): the portfolio's value on the first day
 * and its flows, held at the model's weights, brought back to them on the first business day of
 * each month and on every day with a flow (a deposit is invested, a withdrawal taken, at the
 * weights). Its cash earns nothing, as the portfolio's does not.
 */
export function modelSeries(timeline: Timeline, startValue: number, priorDay: number | undefined): ModelSeries | undefined {
  const { model, days, unitValues, flows } = timeline;
  if (!model) return undefined;
  const { columns, weights, cashWeight } = model;
  const k = columns.length;
  const n = days.length;
  const held = new Float64Array(k);
  let cash = 0;
  const value = new Float64Array(n);
  const index = new Float64Array(n);
  let month = priorDay === undefined ? -1 : monthOf(priorDay);
  for (let t = 0; t < n; t++) {
    let total = cash + flows[t]!;
    for (let j = 0; j < k; j++) if (held[j] !== 0) total += held[j]! * unitValues[columns[j]!]![t]!;
    if (t === 0) total = startValue;
    const m = monthOf(days[t]!);
    if (t === 0 || m !== month || flows[t] !== 0) {
      for (let j = 0; j < k; j++) held[j] = weights[j]! === 0 ? 0 : (weights[j]! * total) / unitValues[columns[j]!]![t]!;
      cash = cashWeight * total;
    }
    month = m;
    value[t] = total;
    if (t === 0) index[0] = 1;
    else {
      const previous = value[t - 1]!;
      index[t] = previous > 0 ? (index[t - 1]! * (total - flows[t]!)) / previous : index[t - 1]!;
    }
  }
  return { value, index };
}
