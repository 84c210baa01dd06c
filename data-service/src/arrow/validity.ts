// Arrow validity bitmaps gathered from DuckDB vectors' validity masks, chunk after chunk.
import duckdb from '@duckdb/node-bindings';
import { grown } from './growth.ts';

/**
 * The null bitmap of a column, appended to chunk by chunk. DuckDB's validity mask is the
 * LSB-first bitmap Arrow uses; a vector without one has every row valid. A chunk that starts on a
 * byte boundary (each one but after a short chunk) is copied as bytes.
 */
export class ValidityBuilder {
  private bits: Uint8Array | undefined;
  length = 0;

  /** Appends the validity of the first `rows` rows of `vector`; returns its mask, undefined when every row is valid. */
  add(vector: duckdb.Vector, rows: number): Uint8Array | undefined {
    const offset = this.length;
    this.length += rows;
    const mask = duckdb.vector_get_validity(vector, Math.ceil(rows / 64) * 8);
    if (!mask) {
      if (this.bits) setRange(this.reserve(), offset, rows);
      return undefined;
    }
    const hadBits = this.bits !== undefined;
    const bits = this.reserve();
    // Everything before this chunk was valid.
    if (!hadBits) setRange(bits, 0, offset);
    copyBits(mask, bits, offset, rows);
    return mask;
  }

  /** The bitmap and null count; no bitmap when no row is null. */
  finish(): { nullBitmap: Uint8Array | undefined; nullCount: number } {
    if (!this.bits) return { nullBitmap: undefined, nullCount: 0 };
    const nullBitmap = this.bits.subarray(0, Math.ceil(this.length / 8));
    const nullCount = this.length - countSet(nullBitmap, this.length);
    return nullCount === 0 ? { nullBitmap: undefined, nullCount: 0 } : { nullBitmap, nullCount };
  }

  private reserve(): Uint8Array {
    this.bits = grown(this.bits ?? new Uint8Array(256), Math.ceil(this.length / 8));
    return this.bits;
  }
}

/** Whether row `i` of an LSB-first bitmap is set (valid). */
export const isSet = (bits: Uint8Array, i: number): boolean => (bits[i >> 3]! & (1 << (i & 7))) !== 0;

function setRange(bits: Uint8Array, from: number, count: number): void {
  for (let i = from; i < from + count; i++) bits[i >> 3]! |= 1 << (i & 7);
}

function copyBits(source: Uint8Array, target: Uint8Array, offset: number, rows: number): void {
  if ((offset & 7) === 0) {
    const whole = rows >> 3;
    target.set(source.subarray(0, whole), offset >> 3);
    // Bits past the last row are not ours to report as valid.
    for (let i = whole << 3; i < rows; i++) if (isSet(source, i)) target[(offset + i) >> 3]! |= 1 << ((offset + i) & 7);
    return;
  }
  for (let i = 0; i < rows; i++) if (isSet(source, i)) target[(offset + i) >> 3]! |= 1 << ((offset + i) & 7);
}

const POPCOUNT = new Uint8Array(256).map((_, b) => {
  let n = 0;
  for (let x = b; x > 0; x >>= 1) n += x & 1;
  return n;
});

function countSet(bits: Uint8Array, length: number): number {
  let n = 0;
  const whole = length >> 3;
  for (let i = 0; i < whole; i++) n += POPCOUNT[bits[i]!]!;
  for (let i = whole << 3; i < length; i++) if (isSet(bits, i)) n++;
  return n;
}
