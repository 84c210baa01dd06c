import { DateDay, Float64, Table, tableToIPC, vectorFromArray } from 'apache-arrow';
import type { HistoryAnswer, HistoryPoint } from './calculate.ts';

type NumberColumn = Exclude<keyof HistoryPoint, 'date'>;
const ALWAYS: NumberColumn[] = ['value', 'cash', 'net_deposits', 'twr', 'drawdown'];
const MODEL: NumberColumn[] = ['model_value', 'model_twr', 'deviation'];

/**
 * A history as an Arrow IPC stream: one row per point, `date` (Date32) and a Float64 column per
 * number of the JSON points (the model's only when asked for), the same values; the base currency,
 * frequency and summary as JSON in the schema metadata, where a reader of the points finds them.
 */
export function historyToArrow(answer: HistoryAnswer): Uint8Array {
  const { points } = answer;
  const withModel = points.length > 0 && points[0]!.model_value !== undefined;
  const columns = [...ALWAYS, ...(withModel ? MODEL : [])];
  const table = new Table({
    date: vectorFromArray(
      points.map((p) => new Date(`${p.date}T00:00:00Z`)),
      new DateDay(),
    ),
    ...Object.fromEntries(
      columns.map((c) => [
        c,
        vectorFromArray(
          points.map((p) => p[c]!),
          new Float64(),
        ),
      ]),
    ),
  });
  table.schema.metadata.set('base_currency', answer.base_currency);
  table.schema.metadata.set('frequency', answer.frequency);
  table.schema.metadata.set('summary', JSON.stringify(answer.summary));
  return tableToIPC(table, 'stream');
}
