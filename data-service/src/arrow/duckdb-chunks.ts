// Arrow IPC streams straight from DuckDB result chunks (the reference answer's binary form).
import { DuckDBTypeId, type DuckDBDataChunk, type DuckDBResult } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import {
  Bool,
  DateDay,
  Field,
  Float64,
  Int32,
  Int64,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  makeData,
  type Data,
  type DataType,
} from 'apache-arrow';

/**
 * Arrow from DuckDB without a detour through JS values: each result chunk's vectors are read as
 * the typed arrays DuckDB keeps them in (`vector_get_data`, `vector_get_validity`) and handed to
 * `makeData`. DuckDB's validity mask is the same LSB-first bitmap Arrow uses, and DATE is Arrow's
 * Date32 (days since 1970-01-01), so both are copied as they are; VARCHAR's 16-byte string
 * headers are unpacked into Arrow's offsets and bytes; BOOLEAN bytes are packed into bits.
 * Going through `getColumnsJS()` and `vectorFromArray` instead is about 8× slower (docs/adr/0013-data-fields-and-arrow.md).
 *
 * Column types follow the result's DuckDB types: VARCHAR → Utf8, DOUBLE → Float64, DATE → Date32
 * (DateDay), BOOLEAN → Bool, INTEGER → Int32, BIGINT → Int64. Cast anything else in SQL first
 * (decimals to DOUBLE); another type is refused rather than guessed.
 */

export type ArrowColumnSpec = { name: string; nullable?: boolean };

type Reader = { type: DataType; read: (vector: duckdb.Vector, rows: number) => Data };

/** The IPC stream (schema message, then one record batch per DuckDB chunk) of a whole result. */
export async function resultToArrowStream(result: DuckDBResult, columns: readonly ArrowColumnSpec[]): Promise<Uint8Array> {
  const { schema, batches } = await resultToRecordBatches(result, columns);
  return RecordBatchStreamWriter.writeAll(batches.length > 0 ? batches : [emptyBatch(schema)]).toUint8Array(true);
}

/** The record batches of a result, one per chunk, with columns named by `columns` in result order. */
export async function resultToRecordBatches(result: DuckDBResult, columns: readonly ArrowColumnSpec[]): Promise<{ schema: Schema; batches: RecordBatch[] }> {
  if (columns.length !== result.columnCount) throw new Error(`expected ${columns.length} columns, the result has ${result.columnCount}`);
  const readers = columns.map((_, i) => readerFor(result.columnTypeId(i), result.columnName(i)));
  const schema = new Schema(columns.map((c, i) => new Field(c.name, readers[i]!.type, c.nullable ?? true)));
  const batches: RecordBatch[] = [];
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    batches.push(chunkToBatch(schema, readers, chunk));
  }
  return { schema, batches };
}

function chunkToBatch(schema: Schema, readers: readonly Reader[], chunk: DuckDBDataChunk): RecordBatch {
  const rows = chunk.rowCount;
  const children = readers.map((reader, i) => reader.read(duckdb.data_chunk_get_vector(chunk.chunk, i), rows));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows, nullCount: 0, children }));
}

function emptyBatch(schema: Schema): RecordBatch {
  const children = schema.fields.map((f) => makeData({ type: f.type, length: 0, nullCount: 0 } as never) as Data);
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 0, nullCount: 0, children }));
}

function readerFor(typeId: DuckDBTypeId, column: string): Reader {
  switch (typeId) {
    case DuckDBTypeId.VARCHAR:
      return { type: new Utf8(), read: readUtf8 };
    case DuckDBTypeId.DOUBLE:
      return fixedWidth(new Float64(), Float64Array);
    case DuckDBTypeId.DATE:
      return fixedWidth(new DateDay(), Int32Array);
    case DuckDBTypeId.INTEGER:
      return fixedWidth(new Int32(), Int32Array);
    case DuckDBTypeId.BIGINT:
      return fixedWidth(new Int64(), BigInt64Array);
    case DuckDBTypeId.BOOLEAN:
      return { type: new Bool(), read: readBool };
    default:
      throw new Error(`column ${column}: DuckDB type ${DuckDBTypeId[typeId]} has no Arrow reader; cast it in SQL`);
  }
}

type TypedArrayConstructor = Float64ArrayConstructor | Int32ArrayConstructor | BigInt64ArrayConstructor;

function fixedWidth(type: DataType, ArrayType: TypedArrayConstructor): Reader {
  return {
    type,
    read: (vector, rows) => {
      const byteLength = rows * ArrayType.BYTES_PER_ELEMENT;
      const bytes = duckdb.vector_get_data(vector, byteLength);
      // A copy: the chunk's memory belongs to DuckDB and goes when the chunk is collected.
      const values = new ArrayType(rows);
      new Uint8Array(values.buffer).set(bytes.subarray(0, byteLength));
      const { nullBitmap, nullCount } = validity(vector, rows);
      return makeData({ type, length: rows, nullCount, nullBitmap, data: values } as never) as Data;
    },
  };
}

function readBool(vector: duckdb.Vector, rows: number): Data {
  const bytes = duckdb.vector_get_data(vector, rows);
  const bits = new Uint8Array(Math.ceil(rows / 8));
  for (let i = 0; i < rows; i++) if (bytes[i] !== 0) bits[i >> 3]! |= 1 << (i & 7);
  const { nullBitmap, nullCount } = validity(vector, rows);
  return makeData({ type: new Bool(), length: rows, nullCount, nullBitmap, data: bits });
}

const STRING_HEADER = 16;
const INLINE_LENGTH = 12;

/**
 * duckdb_string_t: a uint32 length, then either the bytes themselves (up to 12) or a 4-byte
 * prefix and a pointer to them. Null rows hold garbage and are skipped.
 */
function readUtf8(vector: duckdb.Vector, rows: number): Data {
  const headers = duckdb.vector_get_data(vector, rows * STRING_HEADER);
  const view = new DataView(headers.buffer, headers.byteOffset, rows * STRING_HEADER);
  const { nullBitmap, nullCount } = validity(vector, rows);
  const valid = (i: number) => nullBitmap === undefined || (nullBitmap[i >> 3]! & (1 << (i & 7))) !== 0;
  const offsets = new Int32Array(rows + 1);
  let total = 0;
  for (let i = 0; i < rows; i++) {
    if (valid(i)) total += view.getUint32(i * STRING_HEADER, true);
    offsets[i + 1] = total;
  }
  const data = new Uint8Array(total);
  for (let i = 0; i < rows; i++) {
    const length = offsets[i + 1]! - offsets[i]!;
    if (length === 0) continue;
    const at = i * STRING_HEADER;
    const bytes =
      length <= INLINE_LENGTH
        ? headers.subarray(at + 4, at + 4 + length)
        : duckdb.get_data_from_pointer(headers.buffer as ArrayBuffer, headers.byteOffset + at + 8, length);
    data.set(bytes, offsets[i]!);
  }
  return makeData({ type: new Utf8(), length: rows, nullCount, nullBitmap, valueOffsets: offsets, data });
}

/** A copy of the vector's validity as an Arrow null bitmap (undefined when every row is valid). */
function validity(vector: duckdb.Vector, rows: number): { nullBitmap: Uint8Array | undefined; nullCount: number } {
  const mask = duckdb.vector_get_validity(vector, Math.ceil(rows / 64) * 8);
  if (!mask) return { nullBitmap: undefined, nullCount: 0 };
  const nullBitmap = new Uint8Array(Math.ceil(rows / 8));
  nullBitmap.set(mask.subarray(0, nullBitmap.length));
  let valid = 0;
  for (let i = 0; i < rows; i++) if ((nullBitmap[i >> 3]! & (1 << (i & 7))) !== 0) valid++;
  if (valid === rows) return { nullBitmap: undefined, nullCount: 0 };
  // Bits past the last row are not ours to report as valid.
  if (rows % 8 !== 0) nullBitmap[nullBitmap.length - 1]! &= (1 << (rows % 8)) - 1;
  return { nullBitmap, nullCount: rows - valid };
}
