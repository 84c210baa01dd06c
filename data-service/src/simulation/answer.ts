import type { components } from '@platform/api-types/data';
import { formatDay } from './dates.ts';
import type { SimulationOutput } from './engine.ts';

export type FuturePerformanceResponse = components['schemas']['FuturePerformanceResponse'];

/** Amounts are answered in cents (the vendor's sample shows two decimals). */
const cents = (x: number) => Math.round(x * 100) / 100 + 0;

/** A quantile as its key: the requested number as a decimal string ("0.05"), never in exponent form. */
export function quantileKey(q: number): string {
  const text = String(q);
  return text.includes('e') ? q.toFixed(20).replace(/0+$/, '') : text;
}

/**
 * `{data: {value: {q: {date: n}}, deposits: {deposits: {date: n}}, return: {q: {date: n}}}, meta: null}`:
 * value quantiles, cumulative deposits (start amount included) and value − deposits per sample
 * date, quantiles in the requested order. `return` is computed before rounding, so each of the
 * three is within half a cent of the exact figure.
 */
export function futurePerformanceAnswer(out: SimulationOutput, quantiles: readonly number[]): FuturePerformanceResponse {
  const dates = out.dates.map(formatDay);
  const nq = quantiles.length;
  const value: Record<string, Record<string, number>> = {};
  const ret: Record<string, Record<string, number>> = {};
  quantiles.forEach((q, k) => {
    const v: Record<string, number> = {};
    const r: Record<string, number> = {};
    for (let d = 0; d < dates.length; d++) {
      const x = out.values[d * nq + k]!;
      v[dates[d]!] = cents(x);
      r[dates[d]!] = cents(x - out.deposits[d]!);
    }
    value[quantileKey(q)] = v;
    ret[quantileKey(q)] = r;
  });
  const deposits: Record<string, number> = {};
  for (let d = 0; d < dates.length; d++) deposits[dates[d]!] = cents(out.deposits[d]!);
  return { data: { value, deposits: { deposits }, return: ret }, meta: null };
}
