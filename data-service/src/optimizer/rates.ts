// Exchange rates as the optimizer's model takes them (docs/adr/0020-optimizer-model.md): the
// base-currency value of one unit of each other currency, or a refusal naming the pair. Never 1
// by default: a currency without a usable rate makes the request a FAILURE.
import { parseDecimal, type Money } from '@platform/shared';

/**
 * The base-currency value of one unit of a currency, exact decimal text, and the day it was fixed;
 * or why there is none, the pair named in `detail` (no rate, or one too old for the request's day).
 */
export type RateFact = { rate: string; date: string } | { refusal: 'missing' | 'stale'; detail: string };

/**
 * The rates of `currencies` to `base` on the day `asOf` (YYYY-MM-DD), by currency: the base value
 * of one unit, or why there is none (missing, or older than the reference data allows). A currency
 * absent from the answer has no rate.
 */
export type RatesReader = (base: string, currencies: readonly string[], asOf: string) => Promise<ReadonlyMap<string, RateFact>>;

/** The pair as a quote reads it: units of `base` per one unit of `currency`. */
export const pair = (currency: string, base: string) => `${currency}/${base}`;

/** The base value of one unit of `currency`, or the refusal's text naming the pair. */
export function toBase(currency: string, base: string, fact: RateFact | undefined): Money | string {
  if (currency === base) return parseDecimal('1');
  if (fact === undefined) return `no ${pair(currency, base)} exchange rate`;
  if ('refusal' in fact) return fact.detail;
  const rate = /^(0|[1-9]\d*)(\.\d+)?$/.test(fact.rate) ? parseDecimal(fact.rate) : undefined;
  if (rate === undefined || !rate.gt(0))
    return `${pair(currency, base)} exchange rate ${JSON.stringify(fact.rate).slice(0, 40)} of ${fact.date} is not a positive decimal`;
  return rate;
}
