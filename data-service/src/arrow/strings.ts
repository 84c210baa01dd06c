// Arrow Utf8 buffers (offsets and bytes) from DuckDB VARCHAR vectors, copied in bulk.
import duckdb from '@duckdb/node-bindings';
import { grown } from './growth.ts';
import { ValidityBuilder } from './validity.ts';

export type Utf8Buffers = { length: number; valueOffsets: Int32Array; data: Uint8Array; nullBitmap: Uint8Array | undefined; nullCount: number };

const HEADER = 16;
/** The longest string a duckdb_string_t holds in itself. */
export const INLINE_BYTES = 12;
const MAX_BYTES = 2 ** 31 - 1;

/**
 * The Utf8 buffers of a VARCHAR column, appended to chunk by chunk. A vector holds one 16-byte
 * duckdb_string_t per row: a uint32 length, then either the bytes themselves (up to 12) or a
 * 4-byte prefix and a pointer to them. Inline bytes are copied from the headers. Longer strings
 * are copied in runs: rows whose bytes lie back to back in DuckDB's memory (each pointer is where
 * the previous string ends, which is how DuckDB lays out a result's strings) are copied with one
 * native call, and every byte of such a run belongs to one of its strings, so nothing outside
 * DuckDB's strings is read. No string becomes a JS string; a null row is empty. A native call per
 * long string instead costs about 0.9 µs a row (docs/adr/0029-arrow-and-compression.md).
 */
export class Utf8Builder {
  private valueOffsets = new Int32Array(2049);
  private data = new Uint8Array(16384);
  private validity = new ValidityBuilder();
  /** Strings of up to 12 bytes count as empty: the caller reads them from the headers itself. */
  private readonly longOnly: boolean;

  constructor(options: { longOnly?: boolean } = {}) {
    this.longOnly = options.longOnly ?? false;
  }

  get length(): number {
    return this.validity.length;
  }

  /** Appends the first `rows` rows of a VARCHAR vector; returns its headers as uint32 words (4 per row). */
  add(vector: duckdb.Vector, rows: number): Uint32Array {
    const start = this.length;
    const headers = aligned(duckdb.vector_get_data(vector, rows * HEADER));
    const words = new Uint32Array(headers.buffer, headers.byteOffset, rows * 4);
    const mask = this.validity.add(vector, rows);
    const offsets = (this.valueOffsets = grown(this.valueOffsets, start + rows + 1));
    const skip = this.longOnly ? INLINE_BYTES : -1;
    let total = offsets[start]!;
    for (let i = 0; i < rows; i++) {
      const size = words[i * 4]!;
      if (size > skip && (mask === undefined || (mask[i >> 3]! & (1 << (i & 7))) !== 0)) total += size;
      offsets[start + i + 1] = total;
    }
    if (total > MAX_BYTES) throw new Error(`a text column of more than ${MAX_BYTES} bytes does not fit one Arrow Utf8 vector`);
    this.data = grown(this.data, total);
    copyStrings(headers, words, offsets, start, rows, this.data);
    return words;
  }

  /** Empties the builder, keeping its buffers for the next rows. */
  reset(): void {
    this.validity = new ValidityBuilder();
  }

  finish(): Utf8Buffers {
    const length = this.length;
    const valueOffsets = this.valueOffsets.subarray(0, length + 1);
    return { length, valueOffsets, data: this.data.subarray(0, valueOffsets[length]), ...this.validity.finish() };
  }
}

function copyStrings(headers: Uint8Array, words: Uint32Array, offsets: Int32Array, start: number, rows: number, data: Uint8Array): void {
  // The current run: rows `first…last` whose long strings lie back to back from the pointer in row `first`'s header.
  let first = -1;
  let last = -1;
  let runBytes = 0;
  let runEnd = 0;
  // Whether the run's strings are also back to back in `data` (no inline string among them).
  let contiguous = true;
  const flush = () => {
    if (first < 0) return;
    const bytes = duckdb.get_data_from_pointer(headers.buffer as ArrayBuffer, headers.byteOffset + first * HEADER + 8, runBytes);
    if (contiguous) {
      data.set(bytes, offsets[start + first]!);
      return;
    }
    let from = 0;
    for (let i = first; i <= last; i++) {
      const dest = offsets[start + i]!;
      const size = offsets[start + i + 1]! - dest;
      if (size <= INLINE_BYTES) continue;
      for (let b = 0; b < size; b++) data[dest + b] = bytes[from + b]!;
      from += size;
    }
  };
  for (let i = 0; i < rows; i++) {
    const dest = offsets[start + i]!;
    const size = offsets[start + i + 1]! - dest;
    if (size === 0) continue;
    if (size <= INLINE_BYTES) {
      const at = i * HEADER + 4;
      for (let b = 0; b < size; b++) data[dest + b] = headers[at + b]!;
      if (first >= 0) contiguous = false;
      continue;
    }
    const pointer = words[i * 4 + 2]! + words[i * 4 + 3]! * 2 ** 32;
    if (first >= 0 && pointer === runEnd) {
      runBytes += size;
      runEnd += size;
      last = i;
      continue;
    }
    flush();
    first = i;
    last = i;
    runBytes = size;
    runEnd = pointer + size;
    contiguous = true;
  }
  flush();
}

/** The bytes on a 4-byte boundary, so they can be read as uint32 words (DuckDB's vectors are; a copy may not be). */
function aligned(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset % 4 === 0) return bytes;
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}
