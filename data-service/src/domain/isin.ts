// ISIN (ISO 6166): two-letter country code, nine alphanumerics, one check digit. The check digit is
// the Luhn digit of the string with each letter replaced by its value A=10 … Z=35.

const FORMAT = /^[A-Z]{2}[A-Z0-9]{9}[0-9]$/;

/** The check digit of the first eleven characters of an ISIN. */
export function isinCheckDigit(first11: string): number {
  let digits = '';
  for (const c of first11) digits += c >= 'A' && c <= 'Z' ? String(c.charCodeAt(0) - 55) : c;
  let sum = 0;
  // From the right, every other digit starting with the rightmost is doubled (the check digit
  // that follows will take the undoubled place).
  for (let k = 0; k < digits.length; k++) {
    const d = digits.charCodeAt(digits.length - 1 - k) - 48;
    const v = k % 2 === 0 ? d * 2 : d;
    sum += v > 9 ? v - 9 : v;
  }
  return (10 - (sum % 10)) % 10;
}

/** Why the value is not an ISIN, or undefined when it is one. */
export function isinProblem(value: string): string | undefined {
  if (value === '') return 'ISIN is missing';
  if (!FORMAT.test(value)) return `ISIN '${value}' is not two letters, nine letters or digits and a digit`;
  const expected = isinCheckDigit(value.slice(0, 11));
  if (Number(value[11]) !== expected) return `ISIN ${value} has check digit ${value[11]}, expected ${expected}`;
  return undefined;
}

export const isValidIsin = (value: string) => isinProblem(value) === undefined;
