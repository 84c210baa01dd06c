/**
 * Rounding at output (docs/adr/0058-portfolio-history.md): the series are computed in binary
 * floating point for speed, and shown as money to the cent and as returns to 1e-8, both half to
 * even so that a long series of rounded figures carries no upward bias.
 */

function halfEven(x: number, scale: number): number {
  const s = x * scale;
  const floor = Math.floor(s);
  const rest = s - floor;
  const whole = rest > 0.5 ? floor + 1 : rest < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
  // `+ 0` turns a negative zero into 0, which JSON would otherwise print as 0 anyway but
  // assert.deepEqual tells apart.
  return whole / scale + 0;
}

/** Money to the cent, half to even. */
export const toCents = (x: number): number => halfEven(x, 100);

/** A return or ratio to 1e-8, half to even. */
export const toReturn = (x: number): number => halfEven(x, 1e8);
