import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection } from '@duckdb/node-api';

const schemaDir = (which: 'main' | 'reference') => fileURLToPath(new URL(`../../schema/${which}/`, import.meta.url));

/** Applies the numbered schema files of `which` that the database has not seen yet. */
export async function applySchema(connection: DuckDBConnection, which: 'main' | 'reference'): Promise<void> {
  await connection.run('create table if not exists schema_migrations (name varchar primary key, applied_at timestamptz not null default now())');
  const applied = new Set((await connection.runAndReadAll('select name from schema_migrations')).getRowObjects().map((r) => String(r.name)));
  const dir = schemaDir(which);
  const files = (await readdir(dir)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
  for (const file of files.filter((f) => !applied.has(f))) {
    const sql = await readFile(join(dir, file), 'utf8');
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
