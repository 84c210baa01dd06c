// Reading vendor files into DuckDB and writing their rejected rows back out.
import { basename, dirname, join } from 'node:path';
import { rm } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { matchColumns, type FileKind } from './rules.ts';
import { runWithProgress, type ProgressSink } from './progress.ts';

export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
export const sqlIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The DuckDB table function reading the file, chosen by its extension. */
export function readerSql(path: string): string {
  const lower = path.toLowerCase();
  if (/\.(parquet|pq)$/.test(lower)) return `read_parquet(${sqlString(path)})`;
  // Every CSV value is read as text: the rules decide what a value means, not the sniffer. skip = 0:
  // the sniffer would otherwise drop leading lines it finds irregular, silently.
  if (/\.(csv|tsv|txt)(\.gz|\.zst)?$/.test(lower)) return `read_csv(${sqlString(path)}, header = true, all_varchar = true, skip = 0)`;
  throw new Error(`${path}: unknown file type; use .csv (optionally .gz) or .parquet.`);
}

export type Staged = { table: string; rows: number; columns: string[]; ignored: string[] };

/**
 * Copies the file into a temporary table with the known columns under their upper-case names (as
 * text unless `typed`), in file order, so that row n of the file is rowid n - 1. A structurally
 * broken CSV (wrong number of fields) fails the whole file with DuckDB's message naming the line.
 */
export async function stageFile(
  conn: DuckDBConnection,
  path: string,
  kind: FileKind,
  table: string,
  options: { typed?: boolean; progress: ProgressSink; label: string },
): Promise<Staged> {
  const reader = readerSql(path);
  const header = await unreadable(path, conn.runAndReadAll(`describe select * from ${reader}`));
  const names = header.getRowObjects().map((r) => String(r.column_name));
  if (names.length === 1 && /[,;\t|]/.test(names[0]!)) {
    // The sniffer falls back to one column when the lines it samples disagree on their fields.
    throw new Error(`${path} cannot be read: no delimiter splits every line alike; a line probably has more or fewer fields than the header "${names[0]}".`);
  }
  const { columns, ignored } = matchColumns(kind, names);
  const select = [...columns].map(([upper, original]) => `${sqlIdent(original)}${options.typed ? '' : '::varchar'} as ${sqlIdent(upper)}`).join(', ');
  await unreadable(
    path,
    runWithProgress(
      conn,
      `create or replace temp table ${table} as select ${select} from ${reader}`,
      `${options.label}: reading ${basename(path)}`,
      options.progress,
    ),
  );
  const rows = Number((await conn.runAndReadAll(`select count(*) from ${table}`)).getRows()[0]![0]);
  return { table, rows, columns: [...columns.keys()], ignored };
}

/** DuckDB's reading errors, without its list of parser options to try. */
export async function unreadable<T>(path: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    const full = (error as Error).message;
    // Bytes that are not UTF-8 fail the file rather than being read as U+FFFD; DuckDB's "Original
    // Line" then shows a line before the bad one, so only the line number is kept
    // (docs/adr/0040-identifiers-as-people-read-them.md).
    const line = /Invalid unicode/i.test(full) ? /CSV Error on Line: (\d+)/.exec(full)?.[1] : undefined;
    if (line) throw new Error(`${path} cannot be read: line ${line} is not UTF-8; save the file encoded as UTF-8.`, { cause: error });
    const message = full.split(/\n(Possible fixes|The search space used was):/)[0]!.trim();
    throw new Error(`${path} cannot be read: ${message}`, { cause: error });
  }
}

/** Where the rejected rows of an input file go: `<name>.rejects.csv` beside it or in `dir`. */
export const rejectsPath = (input: string, dir?: string) => join(dir ?? dirname(input), `${basename(input)}.rejects.csv`);

/**
 * Writes the rejected rows (table of `rid`, `reason`) with their row number, reason and the
 * file's values as read; removes a rejects file of an earlier run when nothing was rejected.
 */
export async function writeRejects(conn: DuckDBConnection, staged: Staged, rejects: string, path: string, count: number): Promise<string | null> {
  if (count === 0) {
    await rm(path, { force: true });
    return null;
  }
  const values = staged.columns.map((c) => `s.${sqlIdent(c)}`).join(', ');
  await conn.run(`copy (select r.rid + 1 as "ROW", r.reason as "REASON", ${values} from ${rejects} r join ${staged.table} s on s.rowid = r.rid order by r.rid)
    to ${sqlString(path)} (format csv, header)`);
  return path;
}
