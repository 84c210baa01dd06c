import { monthOf, weekOf } from './calendar.ts';
import type { HistoryFrequency } from './input.ts';

/**
 * The positions of the days shown at `frequency`: every day (D), or the last business day of each
 * week, Monday to Sunday (W), or of each month (M), and always the period's first and last day.
 */
export function samplePositions(days: Int32Array, frequency: HistoryFrequency): Int32Array {
  const n = days.length;
  if (frequency === 'D') return Int32Array.from({ length: n }, (_, t) => t);
  const periodOf = frequency === 'W' ? weekOf : monthOf;
  const picked: number[] = [0];
  let current = periodOf(days[0]!);
  for (let t = 1; t < n; t++) {
    const next = periodOf(days[t]!);
    if (next !== current && picked[picked.length - 1] !== t - 1) picked.push(t - 1);
    current = next;
  }
  if (picked[picked.length - 1] !== n - 1) picked.push(n - 1);
  return Int32Array.from(picked);
}
