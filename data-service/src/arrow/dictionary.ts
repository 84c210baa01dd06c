// Dictionary-encoded text columns: each distinct value once, a small index per row.
import type duckdb from '@duckdb/node-bindings';
import { grown } from './growth.ts';
import { INLINE_BYTES, Utf8Builder } from './strings.ts';
import { ValidityBuilder } from './validity.ts';

export type DictionaryBuffers = {
  length: number;
  /** Per row: the position of its value in the dictionary (0 for a null row). */
  indices: Int8Array | Int16Array | Int32Array;
  /** The distinct values in order of first appearance, as Utf8 offsets and bytes. */
  valueOffsets: Int32Array;
  data: Uint8Array;
  nullBitmap: Uint8Array | undefined;
  nullCount: number;
};

const EMPTY = -1;

/**
 * A dictionary-encoded column from VARCHAR vectors, appended to chunk by chunk, without making JS
 * strings. A value of up to 12 bytes is looked up by its 16-byte DuckDB header (length and the
 * bytes themselves, zero-padded), a longer one by its bytes, copied in runs (strings.ts): both in
 * open-addressing hash tables. The index type is the narrowest signed one that holds every
 * position: Int8 up to 127 values, Int16 up to 32,767, Int32 beyond. A null row gets index 0 and
 * adds nothing to the dictionary.
 */
export class DictionaryBuilder {
  private indices = new Int32Array(2048);
  private valueOffsets = new Int32Array(65);
  private data = new Uint8Array(1024);
  private count = 0;
  /** Per entry: its hash, and for a short value its header words (length and three words of bytes). */
  private hashes = new Int32Array(64);
  private headers = new Uint32Array(256);
  private shortSlots: Int32Array = new Int32Array(64).fill(EMPTY);
  private longSlots: Int32Array = new Int32Array(64).fill(EMPTY);
  private shortCount = 0;
  private longCount = 0;
  private readonly validity = new ValidityBuilder();
  private readonly longStrings = new Utf8Builder({ longOnly: true });

  get length(): number {
    return this.validity.length;
  }

  /** Appends the first `rows` rows of a VARCHAR vector. */
  add(vector: duckdb.Vector, rows: number): void {
    const start = this.length;
    const mask = this.validity.add(vector, rows);
    this.longStrings.reset();
    const words = this.longStrings.add(vector, rows);
    const long = this.longStrings.finish();
    const indices = (this.indices = grown(this.indices, start + rows));
    for (let row = 0; row < rows; row++) {
      if (mask !== undefined && (mask[row >> 3]! & (1 << (row & 7))) === 0) continue;
      indices[start + row] =
        words[row * 4]! <= INLINE_BYTES ? this.shortEntry(words, row * 4) : this.longEntry(long.data, long.valueOffsets[row]!, long.valueOffsets[row + 1]!);
    }
  }

  finish(): DictionaryBuffers {
    const length = this.length;
    const wide = this.indices.subarray(0, length);
    const indices = this.count <= 127 ? new Int8Array(length) : this.count <= 32767 ? new Int16Array(length) : wide;
    if (indices !== wide) indices.set(wide);
    const valueOffsets = this.valueOffsets.subarray(0, this.count + 1);
    return { length, indices, valueOffsets, data: this.data.subarray(0, valueOffsets[this.count]), ...this.validity.finish() };
  }

  /** The entry of a value of up to 12 bytes, by its header words `words[at…at+3]`. */
  private shortEntry(words: Uint32Array, at: number): number {
    const w0 = words[at]!;
    const w1 = words[at + 1]!;
    const w2 = words[at + 2]!;
    const w3 = words[at + 3]!;
    let hash = Math.imul(w1 ^ Math.imul(w0, 0x27d4eb2f), 0x9e3779b1);
    hash = Math.imul(hash ^ w2, 0x85ebca77);
    hash = Math.imul(hash ^ w3, 0xc2b2ae3d);
    hash ^= hash >>> 15;
    const mask = this.shortSlots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.shortSlots[slot]!;
      if (entry === EMPTY) break;
      const k = entry * 4;
      if (this.headers[k] === w0 && this.headers[k + 1] === w1 && this.headers[k + 2] === w2 && this.headers[k + 3] === w3) return entry;
      slot = (slot + 1) & mask;
    }
    const bytes = new Uint8Array(words.buffer, words.byteOffset + at * 4 + 4, w0);
    const entry = this.append(bytes, 0, w0, hash);
    this.headers = grown(this.headers, this.count * 4);
    this.headers.set(words.subarray(at, at + 4), entry * 4);
    this.shortSlots[slot] = entry;
    if (++this.shortCount * 2 > this.shortSlots.length) this.shortSlots = this.rehash(this.shortSlots.length * 2, true);
    return entry;
  }

  /** The entry of a longer value, by its bytes `source[from…to]` (FNV-1a). */
  private longEntry(source: Uint8Array, from: number, to: number): number {
    let hash = 0x811c9dc5 | 0;
    for (let k = from; k < to; k++) hash = Math.imul(hash ^ source[k]!, 0x01000193);
    const mask = this.longSlots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.longSlots[slot]!;
      if (entry === EMPTY) break;
      if (this.hashes[entry] === hash && this.sameBytes(entry, source, from, to)) return entry;
      slot = (slot + 1) & mask;
    }
    const entry = this.append(source, from, to, hash);
    this.longSlots[slot] = entry;
    if (++this.longCount * 2 > this.longSlots.length) this.longSlots = this.rehash(this.longSlots.length * 2, false);
    return entry;
  }

  /** Adds the bytes `source[from…to]` as the next entry. */
  private append(source: Uint8Array, from: number, to: number, hash: number): number {
    const entry = this.count++;
    this.hashes = grown(this.hashes, this.count);
    this.hashes[entry] = hash;
    const at = this.valueOffsets[entry]!;
    this.valueOffsets = grown(this.valueOffsets, this.count + 1);
    this.valueOffsets[entry + 1] = at + to - from;
    this.data = grown(this.data, at + to - from);
    this.data.set(source.subarray(from, to), at);
    return entry;
  }

  private sameBytes(entry: number, source: Uint8Array, from: number, to: number): boolean {
    const at = this.valueOffsets[entry]!;
    if (this.valueOffsets[entry + 1]! - at !== to - from) return false;
    for (let k = 0; k < to - from; k++) if (this.data[at + k] !== source[from + k]) return false;
    return true;
  }

  /** The slots of the short (or long) entries in a table of `size` slots. */
  private rehash(size: number, short: boolean): Int32Array {
    const slots = new Int32Array(size).fill(EMPTY);
    const mask = size - 1;
    for (let entry = 0; entry < this.count; entry++) {
      if (this.valueOffsets[entry + 1]! - this.valueOffsets[entry]! <= INLINE_BYTES !== short) continue;
      let slot = this.hashes[entry]! & mask;
      while (slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      slots[slot] = entry;
    }
    return slots;
  }
}
