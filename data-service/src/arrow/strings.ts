// Arrow Utf8 buffers (offsets and bytes) from DuckDB VARCHAR vectors, copied in bulk.
import duckdb from '@duckdb/node-bindings';
import { ValidityBuilder } from './validity.ts';

/** One chunk's vector of a column and the rows it covers in the whole column. */
export type VectorPart = { vector: duckdb.Vector; offset: number; rows: number };

export type Utf8Buffers = { valueOffsets: Int32Array; data: Uint8Array; nullBitmap: Uint8Array | undefined; nullCount: number };

const HEADER = 16;
const INLINE = 12;
const MAX_BYTES = 2 ** 31 - 1;

/**
 * The Utf8 buffers of a VARCHAR column. A vector holds one 16-byte duckdb_string_t per row: a
 * uint32 length, then either the bytes themselves (up to 12) or a 4-byte prefix and a pointer to
 * them. Inline bytes are copied from the headers. Longer strings are copied in runs: rows whose
 * bytes lie back to back in DuckDB's memory (the next pointer is where the previous string ends,
 * which is how DuckDB lays out a result's strings) are copied with one native call, and every byte
 * of such a run belongs to one of its strings, so nothing outside DuckDB's strings is read. No
 * string becomes a JS string; a null row is empty. One native call per long string instead costs
 * about 0.9 µs a row (docs/adr/0029-arrow-and-compression.md).
 */
export function utf8Buffers(parts: readonly VectorPart[], length: number): Utf8Buffers {
  const valueOffsets = new Int32Array(length + 1);
  const validity = new ValidityBuilder(length);
  const headers: Uint8Array[] = [];
  let total = 0;
  for (const { vector, offset, rows } of parts) {
    const bytes = aligned(duckdb.vector_get_data(vector, rows * HEADER));
    headers.push(bytes);
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, rows * 4);
    const mask = validity.add(vector, offset, rows);
    for (let i = 0; i < rows; i++) {
      if (mask === undefined || (mask[i >> 3]! & (1 << (i & 7))) !== 0) total += words[i * 4]!;
      valueOffsets[offset + i + 1] = total;
    }
    if (total > MAX_BYTES) throw new Error(`a text column of more than ${MAX_BYTES} bytes does not fit one Arrow Utf8 vector`);
  }
  const data = new Uint8Array(total);
  parts.forEach(({ offset, rows }, p) => copyStrings(headers[p]!, valueOffsets, offset, rows, data));
  return { valueOffsets, data, ...validity.finish() };
}

function copyStrings(headers: Uint8Array, valueOffsets: Int32Array, offset: number, rows: number, data: Uint8Array): void {
  const words = new Uint32Array(headers.buffer, headers.byteOffset, rows * 4);
  // The current run: rows `first…last` whose long strings lie back to back from the pointer in row `first`'s header.
  let first = -1;
  let last = -1;
  let runBytes = 0;
  let runEnd = 0;
  // Whether the run's strings are also back to back in `data` (no inline string between them).
  let contiguous = true;
  const flush = () => {
    if (first < 0) return;
    const bytes = duckdb.get_data_from_pointer(headers.buffer as ArrayBuffer, headers.byteOffset + first * HEADER + 8, runBytes);
    if (contiguous) {
      data.set(bytes, valueOffsets[offset + first]!);
      return;
    }
    let from = 0;
    for (let i = first; i <= last; i++) {
      const dest = valueOffsets[offset + i]!;
      const size = valueOffsets[offset + i + 1]! - dest;
      if (size <= INLINE) continue;
      for (let b = 0; b < size; b++) data[dest + b] = bytes[from + b]!;
      from += size;
    }
  };
  for (let i = 0; i < rows; i++) {
    const dest = valueOffsets[offset + i]!;
    const size = valueOffsets[offset + i + 1]! - dest;
    if (size === 0) continue;
    if (size <= INLINE) {
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
