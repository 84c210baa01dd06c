// Arrow IPC streams straight from DuckDB result chunks (the reference answer's binary form).
import { DuckDBTypeId, type DuckDBResult } from '@duckdb/node-api';
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
import { DictionaryBuilder } from './dictionary.ts';
import { grown } from './growth.ts';
import { Utf8Builder } from './strings.ts';
import { ValidityBuilder } from './validity.ts';
import { WaitClock } from '../store/wait-clock.ts';

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

/** The IPC stream (schema message, dictionaries, then one record batch) of a whole result; `clock` counts the waits for its chunks. */
export async function resultToArrowStream(result: DuckDBResult, columns: readonly ArrowColumnSpec[], clock = new WaitClock()): Promise<Uint8Array> {
  return RecordBatchStreamWriter.writeAll([await resultToRecordBatch(result, columns, clock)]).toUint8Array(true);
}

/**
 * The whole result as one record batch, with columns named by `columns` in result order. The next
 * chunk is fetched (on DuckDB's threads) while the current one is copied.
 */
export async function resultToRecordBatch(result: DuckDBResult, columns: readonly ArrowColumnSpec[], clock = new WaitClock()): Promise<RecordBatch> {
  if (columns.length !== result.columnCount) throw new Error(`expected ${columns.length} columns, the result has ${result.columnCount}`);
  const builders = columns.map((c, i) => builderFor(result.columnTypeId(i), result.columnName(i), c.dictionary === true ? i : undefined));
  let length = 0;
  let next = result.fetchChunk();
  try {
    for (;;) {
      const chunk = await clock.wait(next);
      if (!chunk || chunk.rowCount === 0) break;
      next = result.fetchChunk();
      const rows = chunk.rowCount;
      builders.forEach((b, i) => b.add(duckdb.data_chunk_get_vector(chunk.chunk, i), rows));
      length += rows;
    }
  } catch (error) {
    // A copy that failed leaves a fetch under way, whose own failure nobody waits for.
    next.catch(() => undefined);
    throw error;
  }
  const children = builders.map((b) => b.finish());
  const schema = new Schema(columns.map((c, i) => new Field(c.name, children[i]!.type, c.nullable ?? true)));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}

type Builder = { add: (vector: duckdb.Vector, rows: number) => void; finish: () => Data };

/** `dictionaryId`: the id of the column's dictionary in the stream when it is dictionary-encoded (its position: the same bytes for the same answer). */
function builderFor(typeId: DuckDBTypeId, column: string, dictionaryId: number | undefined): Builder {
  switch (typeId) {
    case DuckDBTypeId.VARCHAR:
      return dictionaryId === undefined ? utf8Column() : dictionaryColumn(dictionaryId);
    case DuckDBTypeId.DOUBLE:
      return fixedWidth(new Float64(), Float64Array);
    case DuckDBTypeId.DATE:
      return fixedWidth(new DateDay(), Int32Array);
    case DuckDBTypeId.INTEGER:
      return fixedWidth(new Int32(), Int32Array);
    case DuckDBTypeId.BIGINT:
      return fixedWidth(new Int64(), BigInt64Array);
    case DuckDBTypeId.BOOLEAN:
      return boolColumn();
    default:
      throw new Error(`column ${column}: DuckDB type ${DuckDBTypeId[typeId]} has no Arrow reader; cast it in SQL`);
  }
}

type TypedArrayConstructor = Float64ArrayConstructor | Int32ArrayConstructor | BigInt64ArrayConstructor;

function fixedWidth(type: DataType, ArrayType: TypedArrayConstructor): Builder {
  const width = ArrayType.BYTES_PER_ELEMENT;
  let values = new ArrayType(2048);
  const validity = new ValidityBuilder();
  return {
    add: (vector, rows) => {
      const start = validity.length;
      values = grown(values, start + rows);
      // A copy: the chunk's memory belongs to DuckDB and goes when the chunk is collected.
      new Uint8Array(values.buffer, start * width, rows * width).set(duckdb.vector_get_data(vector, rows * width).subarray(0, rows * width));
      validity.add(vector, rows);
    },
    finish: () => {
      const length = validity.length;
      return makeData({ type, length, ...validity.finish(), data: values.subarray(0, length) } as never) as Data;
    },
  };
}

function boolColumn(): Builder {
  let bits = new Uint8Array(256);
  const validity = new ValidityBuilder();
  return {
    add: (vector, rows) => {
      const start = validity.length;
      bits = grown(bits, Math.ceil((start + rows) / 8));
      const bytes = duckdb.vector_get_data(vector, rows);
      for (let i = 0; i < rows; i++) if (bytes[i] !== 0) bits[(start + i) >> 3]! |= 1 << ((start + i) & 7);
      validity.add(vector, rows);
    },
    finish: () => {
      const length = validity.length;
      return makeData({ type: new Bool(), length, ...validity.finish(), data: bits.subarray(0, Math.ceil(length / 8)) });
    },
  };
}

function utf8Column(): Builder {
  const builder = new Utf8Builder();
  return {
    add: (vector, rows) => builder.add(vector, rows),
    finish: () => {
      const { length, valueOffsets, data, nullBitmap, nullCount } = builder.finish();
      return makeData({ type: new Utf8(), length, nullCount, nullBitmap, valueOffsets, data });
    },
  };
}

function dictionaryColumn(id: number): Builder {
  const builder = new DictionaryBuilder();
  return {
    add: (vector, rows) => builder.add(vector, rows),
    finish: () => {
      const { length, indices, valueOffsets, data, nullBitmap, nullCount } = builder.finish();
      const indexType = indices instanceof Int8Array ? new Int8() : indices instanceof Int16Array ? new Int16() : new Int32();
      const values = makeData({ type: new Utf8(), length: valueOffsets.length - 1, nullCount: 0, valueOffsets, data });
      const type = new Dictionary(new Utf8(), indexType, id);
      return makeData({ type, length, nullCount, nullBitmap, data: indices, dictionary: makeVector(values) } as never) as Data;
    },
  };
}
