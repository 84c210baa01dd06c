// Loading the ECB's exchange rates file (eurofxref-hist.csv) into the reference file's fx_rates.
import { basename } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { setOwn } from '@platform/shared';
import { readerSql, rejectsPath, sqlIdent, unreadable, writeRejects, type Staged } from './files.ts';
import { fxColumns, fxRowValidator } from './fx-rules.ts';
import { runWithProgress, type ProgressSink } from './progress.ts';
import type { RawRow } from './rules.ts';

export type FxFileReport = {
  kind: 'fx_rates';
  file: string;
  rows: number;
  accepted: number;
  rejected: number;
  rejects: { row: number; reason: string }[];
  rejects_file: string | null;
  ignored_columns: string[];
};

/**
 * Reads the file (every value as text, in file order), checks each row with the pure rules and
 * appends its accepted rates. A row whose date is bad is refused whole; a bad value is refused
 * alone, the row's other rates kept; either way the row goes to the rejects file with the reasons.
 */
export async function loadFxRates(
  conn: DuckDBConnection,
  path: string,
  ctx: { listRejects: number; progress: ProgressSink; rejectsDir?: string },
): Promise<FxFileReport> {
  const reader = readerSql(path);
  const header = (await unreadable(path, conn.runAndReadAll(`describe select * from ${reader}`))).getRowObjects().map((r) => String(r.column_name));
  const columns = fxColumns(header);
  const currencies = [...columns.currencies.keys()];
  const select = [
    `${sqlIdent(columns.date)}::varchar as "DATE"`,
    ...currencies.map((c) => `${sqlIdent(columns.currencies.get(c)!)}::varchar as ${sqlIdent(c)}`),
  ];
  await unreadable(
    path,
    runWithProgress(
      conn,
      `create or replace temp table stage_fx as select ${select.join(', ')} from ${reader}`,
      `fx rates: reading ${basename(path)}`,
      ctx.progress,
    ),
  );
  const staged: Staged = {
    table: 'stage_fx',
    rows: Number((await conn.runAndReadAll('select count(*) from stage_fx')).getRows()[0]![0]),
    columns: ['DATE', ...currencies],
    ignored: columns.ignored,
  };
  await conn.run('create or replace temp table rejects_fx (rid bigint, reason varchar)');
  const validate = fxRowValidator(currencies);
  ctx.progress({ step: `fx rates: checking ${staged.rows.toLocaleString('en')} rows` });
  // ECB files are a row a business day since 1999 (under 10,000 rows): read in one page.
  const page = await conn.runAndReadAll('select rowid, * from stage_fx order by rowid');
  const names = page.columnNames();
  const out = await conn.createAppender('fx_rates');
  const bad = await conn.createAppender('rejects_fx', 'main', 'temp');
  let accepted = 0;
  const listed: FxFileReport['rejects'] = [];
  for (const values of page.getRows()) {
    const rid = Number(values[0]);
    const raw: RawRow = {};
    for (let c = 1; c < names.length; c++) setOwn(raw, names[c]!, values[c] === null ? null : String(values[c]));
    const result = validate(raw, rid + 1);
    for (const { currency, rate } of result.row?.rates ?? []) {
      out.appendVarchar(currency);
      out.appendVarchar(result.row!.date);
      out.appendVarchar(rate);
      out.endRow();
    }
    if (result.reasons.length === 0) {
      accepted++;
      continue;
    }
    const reason = result.row ? `${result.reasons.join('; ')} (the row's other rates were kept)` : result.reasons.join('; ');
    bad.appendBigInt(BigInt(rid));
    bad.appendVarchar(reason);
    bad.endRow();
    if (listed.length < ctx.listRejects) listed.push({ row: rid + 1, reason });
  }
  out.closeSync();
  bad.closeSync();
  const rejected = staged.rows - accepted;
  const file = await writeRejects(conn, staged, 'rejects_fx', rejectsPath(path, ctx.rejectsDir), rejected);
  await conn.run('drop table stage_fx');
  await conn.run('drop table rejects_fx');
  return { kind: 'fx_rates', file: path, rows: staged.rows, accepted, rejected, rejects: listed, rejects_file: file, ignored_columns: staged.ignored };
}
