import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

const schemaDir = fileURLToPath(new URL('../../schema/', import.meta.url));

export type DuckStore = { instance: DuckDBInstance; connection: DuckDBConnection; close: () => void };

/**
 * Opens (or creates) the DuckDB file of this replica and applies the numbered schema files it has
 * not seen yet. Extensions are never downloaded: parquet, json and icu are built in.
 */
export async function openDuckStore(path: string): Promise<DuckStore> {
  const instance = await DuckDBInstance.create(path, { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const connection = await instance.connect();
  await applySchema(connection);
  return {
    instance,
    connection,
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

async function applySchema(connection: DuckDBConnection): Promise<void> {
  await connection.run('create table if not exists schema_migrations (name varchar primary key, applied_at timestamptz not null default now())');
  const applied = new Set((await connection.runAndReadAll('select name from schema_migrations')).getRowObjects().map((r) => String(r.name)));
  const files = (await readdir(schemaDir)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
  for (const file of files.filter((f) => !applied.has(f))) {
    const sql = await readFile(schemaDir + file, 'utf8');
    await connection.run('begin transaction');
    try {
      await connection.run(sql);
      await connection.run('insert into schema_migrations (name) values ($1)', [file]);
      await connection.run('commit');
    } catch (error) {
      await connection.run('rollback');
      throw error;
    }
  }
}

export async function duckAnswers(store: DuckStore): Promise<void> {
  await store.connection.run('select 1');
}
