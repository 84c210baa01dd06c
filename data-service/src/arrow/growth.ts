// Typed arrays that grow by doubling, for buffers filled chunk by chunk.

type Growable = Uint8Array | Int32Array | Uint32Array | Float64Array | BigInt64Array;

/** `array` when it holds `needed` elements, otherwise a copy at least twice as long (zero-filled past the old end). */
export function grown<T extends Growable>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const next = new (array.constructor as new (length: number) => T)(Math.max(needed, array.length * 2));
  next.set(array as never);
  return next;
}
