// Dictionary-encoded text columns: each distinct value once, a small index per row.
import type duckdb from '@duckdb/node-bindings';
import { grown } from './growth.ts';
import { Utf8Builder } from './strings.ts';
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
 * A dictionary-encoded column from VARCHAR vectors, appended to chunk by chunk: each chunk's
 * strings are copied as Utf8 bytes (strings.ts), then looked up by their bytes (FNV-1a hashes in
 * an open-addressing table, bytes compared on a hit), never as JS strings. The index type is the
 * narrowest signed one that holds every position: Int8 up to 127 values, Int16 up to 32,767,
 * Int32 beyond. A null row gets index 0 and adds nothing to the dictionary.
 */
export class DictionaryBuilder {
  private indices = new Int32Array(2048);
  private valueOffsets = new Int32Array(65);
  private data = new Uint8Array(1024);
  private hashes = new Int32Array(64);
  private slots = new Int32Array(128).fill(EMPTY);
  private count = 0;
  private readonly validity = new ValidityBuilder();

  get length(): number {
    return this.validity.length;
  }

  /** Appends the first `rows` rows of a VARCHAR vector. */
  add(vector: duckdb.Vector, rows: number): void {
    const start = this.length;
    const mask = this.validity.add(vector, rows);
    const chunk = new Utf8Builder();
    chunk.add(vector, rows);
    const { valueOffsets, data } = chunk.finish();
    const indices = (this.indices = grown(this.indices, start + rows));
    for (let row = 0; row < rows; row++) {
      if (mask !== undefined && (mask[row >> 3]! & (1 << (row & 7))) === 0) continue;
      indices[start + row] = this.lookup(data, valueOffsets[row]!, valueOffsets[row + 1]!);
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

  /** The position of the bytes `from…to` of `source` in the dictionary, added when new. */
  private lookup(source: Uint8Array, from: number, to: number): number {
    let hash = 0x811c9dc5 | 0;
    for (let k = from; k < to; k++) hash = Math.imul(hash ^ source[k]!, 0x01000193);
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === EMPTY) break;
      if (this.hashes[entry] === hash && this.equals(entry, source, from, to)) return entry;
      slot = (slot + 1) & mask;
    }
    const entry = this.count++;
    this.hashes = grown(this.hashes, this.count);
    this.hashes[entry] = hash;
    const at = this.valueOffsets[entry]!;
    this.valueOffsets = grown(this.valueOffsets, this.count + 1);
    this.valueOffsets[entry + 1] = at + to - from;
    this.data = grown(this.data, at + to - from);
    this.data.set(source.subarray(from, to), at);
    this.slots[slot] = entry;
    if (this.count * 2 > this.slots.length) this.rehash();
    return entry;
  }

  private equals(entry: number, source: Uint8Array, from: number, to: number): boolean {
    const at = this.valueOffsets[entry]!;
    if (this.valueOffsets[entry + 1]! - at !== to - from) return false;
    for (let k = 0; k < to - from; k++) if (this.data[at + k] !== source[from + k]) return false;
    return true;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(EMPTY);
    const mask = this.slots.length - 1;
    for (let entry = 0; entry < this.count; entry++) {
      let slot = this.hashes[entry]! & mask;
      while (this.slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      this.slots[slot] = entry;
    }
  }
}
