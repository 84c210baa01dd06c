// Looking everywhere for a person's data (docs/adr/0059-personal-data-erasure.md): every text, JSON
// and array column of every table, every row of every table as text (a logical dump), every message
// kept in the JetStream streams, log lines, and the data service's DuckDB file. Each finding names where it was.
import { DuckDBInstance } from '@duckdb/node-api';
import type { Knex } from 'knex';
import { connectNats, jetstreamManager, streams } from '@platform/shared';

export type Finding = { where: string; needle: string };

/** The needles found in `text`, each once. */
const found = (text: string, needles: readonly string[]) => needles.filter((n) => text.toLowerCase().includes(n.toLowerCase()));

/**
 * Every column of a type that can hold text (text, varchar, char, json, jsonb, arrays, bytea as
 * its escaped text) of every table outside the catalogs, searched for each needle, case-insensitive.
 * `db` must bypass row-level security (a superuser's connection).
 */
export async function scanColumns(db: Knex, needles: readonly string[]): Promise<Finding[]> {
  const columns = (await db.raw(
    `select c.table_schema as schema, c.table_name as table, c.column_name as column
       from information_schema.columns c
       join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
      where c.table_schema not in ('pg_catalog', 'information_schema')
        and (c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'ARRAY', 'USER-DEFINED'))
      order by 1, 2, 3`,
  )) as { rows: { schema: string; table: string; column: string }[] };
  const findings: Finding[] = [];
  for (const { schema, table, column } of columns.rows) {
    for (const needle of needles) {
      const hit = (await db.raw(`select exists (select 1 from ??.?? where ??::text ilike ?) as hit`, [schema, table, column, `%${like(needle)}%`])) as {
        rows: { hit: boolean }[];
      };
      if (hit.rows[0]!.hit) findings.push({ where: `${schema}.${table}.${column}`, needle });
    }
  }
  return findings;
}

const like = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A logical dump of the database as its rows' text, table by table (what `COPY … TO STDOUT` writes):
 * every row of every table outside the catalogs, whatever its columns' types.
 */
export async function dumpRows(db: Knex): Promise<Map<string, string>> {
  const tables = (await db.raw(
    `select schemaname as schema, tablename as table from pg_tables where schemaname not in ('pg_catalog', 'information_schema') order by 1, 2`,
  )) as { rows: { schema: string; table: string }[] };
  const dump = new Map<string, string>();
  for (const { schema, table } of tables.rows) {
    const rows = (await db.raw(`select t::text as row from ??.?? t`, [schema, table])) as { rows: { row: string }[] };
    dump.set(`${schema}.${table}`, rows.rows.map((r) => r.row).join('\n'));
  }
  return dump;
}

/** The needles in a dump, by table. */
export const scanDump = (dump: Map<string, string>, needles: readonly string[]): Finding[] =>
  [...dump].flatMap(([table, text]) => found(text, needles).map((needle) => ({ where: `dump ${table}`, needle })));

/** Every message kept in the platform's JetStream streams, searched; also how many were read. */
export async function scanStreams(natsUrl: string, needles: readonly string[]): Promise<{ findings: Finding[]; messages: number }> {
  const nc = await connectNats(natsUrl, 'personal-data-scan', { reconnect: false });
  try {
    const jsm = await jetstreamManager(nc);
    const findings: Finding[] = [];
    let messages = 0;
    for (const { name } of Object.values(streams)) {
      const info = await jsm.streams.info(name).catch(() => undefined);
      if (!info) continue;
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const message = await jsm.streams.getMessage(name, { seq }).catch(() => undefined);
        if (!message) continue; // deleted from the stream
        messages++;
        const headers = message.header ? [...message.header.keys()].map((k) => `${k}: ${message.header!.get(k)}`).join('\n') : '';
        for (const needle of found(`${message.subject}\n${headers}\n${message.string()}`, needles))
          findings.push({ where: `${name} #${seq} ${message.subject}`, needle });
      }
    }
    return { findings, messages };
  } finally {
    await nc.close();
  }
}

/** The needles in log lines. */
export const scanLines = (lines: readonly string[], needles: readonly string[]): Finding[] =>
  lines.flatMap((line, k) => found(line, needles).map((needle) => ({ where: `log line ${k + 1}`, needle })));

/**
 * Every row of every table of a DuckDB file (the data service's, once it stopped) as text, searched;
 * also how many rows were read. Its strings are compressed on disk, so the rows are read, not bytes.
 */
export async function scanDuckFile(path: string, needles: readonly string[]): Promise<{ findings: Finding[]; rows: number }> {
  const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const conn = await instance.connect();
  try {
    const tables = (await conn.runAndReadAll('select database_name, schema_name, table_name from duckdb_tables() where not temporary')).getRows();
    const findings: Finding[] = [];
    let rows = 0;
    for (const [database, schema, table] of tables) {
      const name = [database, schema, table].map((part) => `"${String(part).replaceAll('"', '""')}"`).join('.');
      const text = (await conn.runAndReadAll(`select t::varchar from ${name} t`)).getRows().map((row) => String(row[0]));
      rows += text.length;
      for (const needle of found(text.join('\n'), needles)) findings.push({ where: `duckdb ${name}`, needle });
    }
    return { findings, rows };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
