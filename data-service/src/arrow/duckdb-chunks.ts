// Arrow IPC streams straight from DuckDB result chunks (the reference answer's binary form).
import { DuckDBTypeId, type DuckDBDataChunk, type DuckDBResult } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import {
  Bool,
  DateDay,
  Dictionary,
  Field,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  makeData,
  makeVector,
  type Data,
  type DataType,
} from 'apache-arrow';
import { dictionaryEncode } from './dictionary.ts';
import { utf8Buffers, type VectorPart } from './strings.ts';
import { ValidityBuilder, isSet } from './validity.ts';

/**
 * Arrow from DuckDB without a detour through JS values: the result's chunks are fetched, then
 * each column is assembled into one set of Arrow buffers from the vectors' memory
 * (`vector_get_data`, `vector_get_validity`). DuckDB's validity mask is the LSB-first bitmap Arrow
 * uses, and DATE is Arrow's Date32 (days since 1970-01-01), so both are copied as they are;
 * VARCHAR becomes Utf8 offsets and bytes copied in bulk (strings.ts); BOOLEAN bytes are packed
 * into bits. The answer is one record batch (docs/adr/0029-arrow-and-compression.md).
 *
 * Column types follow the result's DuckDB types: VARCHAR → Utf8 (or Dictionary<Utf8> for a column
 * marked `dictionary`), DOUBLE → Float64, DATE → Date32 (DateDay), BOOLEAN → Bool, INTEGER →
 * Int32, BIGINT → Int64. Cast anything else in SQL first (decimals to DOUBLE); another type is
 * refused rather than guessed.
 */

export type ArrowColumnSpec = {
  name: string;
  nullable?: boolean;
  /** A text column of few distinct values (asset class, currency): dictionary-encoded, its index Int8, Int16 or Int32, the narrowest that fits. */
  dictionary?: boolean;
};

/** The IPC stream (schema message, dictionaries, then one record batch) of a whole result. */
export async function resultToArrowStream(result: DuckDBResult, columns: readonly ArrowColumnSpec[]): Promise<Uint8Array> {
  return RecordBatchStreamWriter.writeAll([await resultToRecordBatch(result, columns)]).toUint8Array(true);
}

/** The whole result as one record batch, with columns named by `columns` in result order. */
export async function resultToRecordBatch(result: DuckDBResult, columns: readonly ArrowColumnSpec[]): Promise<RecordBatch> {
  if (columns.length !== result.columnCount) throw new Error(`expected ${columns.length} columns, the result has ${result.columnCount}`);
  const readers = columns.map((c, i) => readerFor(result.columnTypeId(i), result.columnName(i), c.dictionary === true));
  // The chunks stay alive until every column is copied out of them.
  const chunks: DuckDBDataChunk[] = [];
  let length = 0;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    chunks.push(chunk);
    length += chunk.rowCount;
  }
  const children = readers.map((read, i) => {
    let offset = 0;
    const parts = chunks.map((chunk): VectorPart => {
      const part = { vector: duckdb.data_chunk_get_vector(chunk.chunk, i), offset, rows: chunk.rowCount };
      offset += chunk.rowCount;
      return part;
    });
    return read(parts, length);
  });
  const schema = new Schema(columns.map((c, i) => new Field(c.name, children[i]!.type, c.nullable ?? true)));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}

type Reader = (parts: readonly VectorPart[], length: number) => Data;

function readerFor(typeId: DuckDBTypeId, column: string, dictionary: boolean): Reader {
  switch (typeId) {
    case DuckDBTypeId.VARCHAR:
      return dictionary ? readDictionary : readUtf8;
    case DuckDBTypeId.DOUBLE:
      return fixedWidth(new Float64(), Float64Array);
    case DuckDBTypeId.DATE:
      return fixedWidth(new DateDay(), Int32Array);
    case DuckDBTypeId.INTEGER:
      return fixedWidth(new Int32(), Int32Array);
    case DuckDBTypeId.BIGINT:
      return fixedWidth(new Int64(), BigInt64Array);
    case DuckDBTypeId.BOOLEAN:
      return readBool;
    default:
      throw new Error(`column ${column}: DuckDB type ${DuckDBTypeId[typeId]} has no Arrow reader; cast it in SQL`);
  }
}

type TypedArrayConstructor = Float64ArrayConstructor | Int32ArrayConstructor | BigInt64ArrayConstructor;

function fixedWidth(type: DataType, ArrayType: TypedArrayConstructor): Reader {
  return (parts, length) => {
    const values = new ArrayType(length);
    const bytes = new Uint8Array(values.buffer);
    const validity = new ValidityBuilder(length);
    for (const { vector, offset, rows } of parts) {
      const byteLength = rows * ArrayType.BYTES_PER_ELEMENT;
      // A copy: the chunk's memory belongs to DuckDB and goes when the chunk is collected.
      bytes.set(duckdb.vector_get_data(vector, byteLength).subarray(0, byteLength), offset * ArrayType.BYTES_PER_ELEMENT);
      validity.add(vector, offset, rows);
    }
    return makeData({ type, length, ...validity.finish(), data: values } as never) as Data;
  };
}

function readBool(parts: readonly VectorPart[], length: number): Data {
  const bits = new Uint8Array(Math.ceil(length / 8));
  const validity = new ValidityBuilder(length);
  for (const { vector, offset, rows } of parts) {
    const bytes = duckdb.vector_get_data(vector, rows);
    for (let i = 0; i < rows; i++) if (bytes[i] !== 0) bits[(offset + i) >> 3]! |= 1 << ((offset + i) & 7);
    validity.add(vector, offset, rows);
  }
  return makeData({ type: new Bool(), length, ...validity.finish(), data: bits });
}

function readUtf8(parts: readonly VectorPart[], length: number): Data {
  const { valueOffsets, data, nullBitmap, nullCount } = utf8Buffers(parts, length);
  return makeData({ type: new Utf8(), length, nullCount, nullBitmap, valueOffsets, data });
}

function readDictionary(parts: readonly VectorPart[], length: number): Data {
  const text = utf8Buffers(parts, length);
  const { nullBitmap, nullCount } = text;
  const encoded = dictionaryEncode(text.valueOffsets, text.data, nullBitmap ? (row) => isSet(nullBitmap, row) : () => true);
  const indexType = encoded.indices instanceof Int8Array ? new Int8() : encoded.indices instanceof Int16Array ? new Int16() : new Int32();
  const values = makeData({ type: new Utf8(), length: encoded.valueOffsets.length - 1, nullCount: 0, valueOffsets: encoded.valueOffsets, data: encoded.data });
  const type = new Dictionary(new Utf8(), indexType);
  return makeData({ type, length, nullCount, nullBitmap, data: encoded.indices, dictionary: makeVector(values) } as never) as Data;
}
