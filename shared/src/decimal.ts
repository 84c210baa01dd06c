import { Decimal } from 'decimal.js';

/** Money is exact decimal end to end: parse from text, add exactly, emit as JSON numbers at the edge. */
const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN });
export type Money = InstanceType<typeof Money>;

const DECIMAL_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/** Parses a decimal written as text (`"12.50"`); throws on anything else (exponents, spaces, NaN). */
export function parseDecimal(text: string): Money {
  if (!DECIMAL_TEXT.test(text)) throw new RangeError(`"${text}" is not a decimal number`);
  return new Money(text);
}

/** Converts a JSON number exactly as written in its shortest form (0.1 stays 0.1). */
export function fromNumber(value: number): Money {
  if (!Number.isFinite(value)) throw new RangeError(`${value} is not a finite number`);
  return new Money(String(value));
}

export function sum(values: Money[]): Money {
  return values.reduce((acc, v) => acc.plus(v), new Money(0));
}

/** The decimal as canonical text without exponent (`"0.3"`, `"1000"`). */
export function toText(value: Money): string {
  return value.toFixed();
}
