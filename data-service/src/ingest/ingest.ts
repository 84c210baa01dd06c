// `npm run cli -- data ingest`: vendor files → a new reference file. Every replica attaches the
// newest file of the reference directory at its next reload poll, so publishing one is the whole
// deployment; a file is published only when complete (buildReferenceFile).
import { access, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { setOwn } from '@platform/shared';
import { buildReferenceFile } from '../store/reference-files.ts';
import { rejectsPath, stageFile, writeRejects, type Staged } from './files.ts';
import { loadFxRates, type FxFileReport } from './fx-rates.ts';
import { enableProgress, runWithProgress, silentProgress, type ProgressSink } from './progress.ts';
import {
  FACTOR_METRICS,
  factorValidator,
  instrumentValidator,
  priceChecksSql,
  universeName,
  universeValidator,
  type Checked,
  type FactorRow,
  type FileKind,
  type InstrumentRow,
  type RawRow,
} from './rules.ts';

export type IngestFiles = {
  instruments: string;
  prices?: string;
  factors?: string;
  /** Universe name → file with an ISIN column. Without GLOBAL, GLOBAL is every accepted instrument. */
  universes?: Record<string, string>;
  /** The ECB's daily rates (eurofxref-hist.csv: Date, then one column per currency, units per 1 EUR). */
  fxRates?: string;
};

export type IngestOptions = {
  referenceDir: string;
  /** Where `<input>.rejects.csv` files go; default: beside each input. */
  rejectsDir?: string;
  /** Rejected rows listed in the report per file (the rejects file has them all). */
  listRejects?: number;
  /** Reference files kept in the directory, the new one included (older ones are deleted). */
  keep?: number;
  progress?: ProgressSink;
};

export type FileReport = {
  kind: FileKind;
  universe?: string;
  file: string;
  rows: number;
  accepted: number;
  rejected: number;
  /** The first rejected rows: row number in the file (1 = first row after the header) and why. */
  rejects: { row: number; reason: string }[];
  rejects_file: string | null;
  ignored_columns: string[];
};

export type IngestReport = {
  reference_file: string;
  instruments: number;
  prices: number;
  factor_metrics: number;
  universes: Record<string, number>;
  fx_rates: number;
  files: (FileReport | FxFileReport)[];
  deleted_reference_files: string[];
};

type Context = Required<Pick<IngestOptions, 'listRejects' | 'progress'>> & Pick<IngestOptions, 'rejectsDir'>;

export async function ingestReferenceData(files: IngestFiles, options: IngestOptions): Promise<IngestReport> {
  const universes = Object.entries(files.universes ?? {}).map(([name, file]) => ({ name: universeName(name), file }));
  if (new Set(universes.map((u) => u.name)).size !== universes.length) throw new Error('A universe is named twice.');
  const inputs = [files.instruments, files.prices, files.factors, ...universes.map((u) => u.file), files.fxRates].filter((f): f is string => !!f);
  for (const file of inputs) await access(file).catch(() => Promise.reject(new Error(`${file}: no such file.`)));

  const ctx: Context = { listRejects: options.listRejects ?? 10, progress: options.progress ?? silentProgress, rejectsDir: options.rejectsDir };
  const reports: (FileReport | FxFileReport)[] = [];
  const source = `ingest: ${[
    basename(files.instruments),
    files.prices && basename(files.prices),
    files.factors && basename(files.factors),
    ...universes.map((u) => `${u.name}=${basename(u.file)}`),
    files.fxRates && basename(files.fxRates),
  ]
    .filter(Boolean)
    .join(', ')}`;
  let counts = { instruments: 0, prices: 0, factor_metrics: 0, universes: {} as Record<string, number>, fx_rates: 0 };

  const published = await buildReferenceFile(options.referenceDir, source, async (conn) => {
    await enableProgress(conn);
    const instruments = await loadRows(conn, 'instruments', files.instruments, ctx, instrumentValidator(), 'instruments', appendInstrument);
    reports.push(instruments);
    if (instruments.accepted === 0)
      throw new Error(
        `No row of ${files.instruments} was accepted, so nothing was published${instruments.rejects_file ? ` (reasons in ${instruments.rejects_file})` : ''}.`,
      );
    const accepted = new Set((await conn.runAndReadAll('select isin from instruments')).getRows().map((r) => String(r[0])));
    if (files.prices) reports.push(await loadPrices(conn, files.prices, ctx));
    if (files.factors) reports.push(await loadRows(conn, 'factors', files.factors, ctx, factorValidator(accepted), 'factor_metrics', appendFactors));
    for (const u of universes) {
      const report = await loadRows(conn, 'universe', u.file, ctx, universeValidator(accepted), 'universes', (a, isin: string) => {
        a.appendVarchar(u.name);
        a.appendVarchar(isin);
      });
      reports.push({ ...report, universe: u.name });
    }
    if (files.fxRates) reports.push(await loadFxRates(conn, files.fxRates, ctx));
    if (!universes.some((u) => u.name === 'GLOBAL')) await conn.run(`insert into universes select 'GLOBAL', isin from instruments`);
    const count = async (sql: string) => Number((await conn.runAndReadAll(sql)).getRows()[0]![0]);
    counts = {
      instruments: await count('select count(*) from instruments'),
      prices: await count('select count(*) from prices'),
      factor_metrics: await count('select count(*) from factor_metrics'),
      fx_rates: await count('select count(*) from fx_rates'),
      universes: Object.fromEntries(
        (await conn.runAndReadAll('select universe_name, count(*) from universes group by 1 order by 1')).getRows().map((r) => [String(r[0]), Number(r[1])]),
      ),
    };
    ctx.progress({ step: 'writing the reference file' });
  });
  const deleted = await pruneReferenceFiles(options.referenceDir, options.keep ?? 3);
  return { reference_file: published, ...counts, files: reports, deleted_reference_files: deleted };
}

type Appender = Awaited<ReturnType<DuckDBConnection['createAppender']>>;
const PAGE = 10_000;

/**
 * Checks a file row by row with a pure validator and appends the accepted rows to `target`; the
 * refused ones go to the rejects file. Read page by page in file order (no query stays open while
 * appending).
 */
async function loadRows<T>(
  conn: DuckDBConnection,
  kind: FileKind,
  path: string,
  ctx: Context,
  validate: (raw: RawRow, row: number) => Checked<T>,
  target: string,
  append: (a: Appender, row: T) => void,
): Promise<FileReport> {
  const label = kind === 'universe' ? `universe ${basename(path)}` : kind;
  const staged = await stageFile(conn, path, kind, `stage_${kind}`, { progress: ctx.progress, label });
  const rejects = `rejects_${kind}`;
  await conn.run(`create or replace temp table ${rejects} (rid bigint, reason varchar)`);
  let accepted = 0;
  let rejected = 0;
  const listed: FileReport['rejects'] = [];
  const step = `${label}: checking ${staged.rows.toLocaleString('en')} rows`;
  for (let from = 0; from < staged.rows; from += PAGE) {
    ctx.progress({ step, fraction: from / staged.rows });
    const page = await conn.runAndReadAll(`select rowid, * from ${staged.table} where rowid >= ${from} and rowid < ${from + PAGE} order by rowid`);
    const names = page.columnNames();
    const out = await conn.createAppender(target);
    const bad = await conn.createAppender(rejects, 'main', 'temp');
    for (const values of page.getRows()) {
      const rid = Number(values[0]);
      const raw: RawRow = {};
      for (let c = 1; c < names.length; c++) setOwn(raw, names[c]!, values[c] === null ? null : String(values[c]));
      const result = validate(raw, rid + 1);
      if ('row' in result) {
        append(out, result.row);
        out.endRow();
        accepted++;
      } else {
        bad.appendBigInt(BigInt(rid));
        bad.appendVarchar(result.reason);
        bad.endRow();
        rejected++;
        if (listed.length < ctx.listRejects) listed.push({ row: rid + 1, reason: result.reason });
      }
    }
    out.closeSync();
    bad.closeSync();
  }
  ctx.progress({ step, fraction: 1 });
  const file = await writeRejects(conn, staged, rejects, rejectsPath(path, ctx.rejectsDir), rejected);
  await dropStage(conn, staged, rejects);
  return { kind, file: path, rows: staged.rows, accepted, rejected, rejects: listed, rejects_file: file, ignored_columns: staged.ignored };
}

const text = (a: Appender, v: string | null) => (v === null ? a.appendNull() : a.appendVarchar(v));
const number = (a: Appender, v: number | null) => (v === null ? a.appendNull() : a.appendDouble(v));

/** In the column order of the instruments table; decimals and dates are cast from their text by DuckDB. */
function appendInstrument(a: Appender, r: InstrumentRow): void {
  text(a, r.isin);
  text(a, r.name);
  for (const v of [r.ticker, r.asset_class, r.asset_subclass, r.instrument_type, r.currency, r.country, r.region, r.sector, r.exchange]) text(a, v);
  number(a, r.market_cap);
  text(a, r.size_label);
  text(a, r.price);
  text(a, r.price_date);
  number(a, r.dividend_yield);
  number(a, r.ter);
  text(a, r.analyst_target_price);
}

function appendFactors(a: Appender, r: FactorRow): void {
  text(a, r.isin);
  for (const metric of FACTOR_METRICS) number(a, r[metric.toLowerCase() as keyof Omit<FactorRow, 'isin'>] ?? null);
}

/**
 * Prices are checked in SQL (files of millions of rows): the accepted rows go to the prices table
 * in ISIN and date order; an instrument without a PRICE of its own gets its last close.
 */
async function loadPrices(conn: DuckDBConnection, path: string, ctx: Context): Promise<FileReport> {
  const staged = await stageFile(conn, path, 'prices', 'stage_prices', { typed: true, progress: ctx.progress, label: 'prices' });
  await runWithProgress(
    conn,
    `create or replace temp table price_checks as ${priceChecksSql(staged.table, 'instruments')}`,
    `prices: checking ${staged.rows.toLocaleString('en')} rows`,
    ctx.progress,
  );
  await runWithProgress(
    conn,
    `insert into prices select isin, date, close from price_checks where reason is null order by isin, date`,
    'prices: storing',
    ctx.progress,
  );
  await conn.run(`update instruments i set price = l.close, price_date = l.date
    from (select isin, arg_max(close, date) as close, max(date) as date from prices group by isin) l
    where l.isin = i.isin and i.price is null`);
  const rejected = Number((await conn.runAndReadAll('select count(*) from price_checks where reason is not null')).getRows()[0]![0]);
  const listed = (await conn.runAndReadAll(`select rid + 1, reason from price_checks where reason is not null order by rid limit ${ctx.listRejects}`))
    .getRows()
    .map((r: DuckDBValue[]) => ({ row: Number(r[0]), reason: String(r[1]) }));
  await conn.run(`create or replace temp table rejects_prices as select rid, reason from price_checks where reason is not null`);
  const file = await writeRejects(conn, staged, 'rejects_prices', rejectsPath(path, ctx.rejectsDir), rejected);
  await conn.run('drop table price_checks');
  await dropStage(conn, staged, 'rejects_prices');
  return {
    kind: 'prices',
    file: path,
    rows: staged.rows,
    accepted: staged.rows - rejected,
    rejected,
    rejects: listed,
    rejects_file: file,
    ignored_columns: staged.ignored,
  };
}

async function dropStage(conn: DuckDBConnection, staged: Staged, rejects: string): Promise<void> {
  await conn.run(`drop table ${staged.table}`);
  await conn.run(`drop table ${rejects}`);
}

const REFERENCE_FILE = /^reference-\d{8}T\d{9}Z\.duckdb$/;

/**
 * Deletes all but the newest `keep` reference files. Replicas only ever attach the newest one, and
 * a replica still reading an older one keeps it readable until it detaches (an unlinked file
 * stays open).
 */
export async function pruneReferenceFiles(dir: string, keep: number): Promise<string[]> {
  if (keep < 1) throw new Error('keep must be at least 1');
  const old = (await readdir(dir))
    .filter((n) => REFERENCE_FILE.test(n))
    .sort()
    .slice(0, -keep);
  for (const name of old) {
    await rm(join(dir, name), { force: true });
    await rm(join(dir, `${name}.wal`), { force: true });
  }
  return old.map((n) => join(dir, n));
}
