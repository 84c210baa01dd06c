import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { migrationFolders } from '@platform/shared';

const MIGRATION_FILE = /^\d{3}_[a-z0-9_]+\.sql$/;

/** Every migration file of `folders` by name, ordered by name; a name used twice is an error. */
export async function migrationFiles(folders: readonly string[] = migrationFolders): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const folder of folders) {
    for (const name of (await readdir(folder)).filter((f) => MIGRATION_FILE.test(f))) {
      if (files.has(name)) throw new Error(`migration ${name} is in both ${files.get(name)} and ${folder}: give one a new number`);
      files.set(name, join(folder, name));
    }
  }
  return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Plain numbered SQL files of every owner's migrations folder, applied in order of their names by
 * knex (with its lock and table). A file keeps its name when it moves between folders, so a database
 * that applied it does not apply it again.
 */
const sqlMigrations = (folders: readonly string[]): Knex.MigrationSource<string> => ({
  getMigrations: async () => [...(await migrationFiles(folders)).values()],
  getMigrationName: (path) => path.slice(path.lastIndexOf('/') + 1),
  getMigration: async (path) => {
    const sql = await readFile(path, 'utf8');
    return {
      // knex reads `?` as a binding placeholder even without bindings; escaped, the file runs as written.
      up: (db: Knex) => db.raw(sql.replace(/\?/g, '\\?')),
      down: () => {
        throw new Error('migrations are forward only');
      },
    };
  },
});

/** Applies the pending migrations; returns the names applied. Safe to run from several replicas. */
export async function migrateLatest(db: Knex, folders: readonly string[] = migrationFolders): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: sqlMigrations(folders), tableName: 'schema_migrations' })) as [number, string[]];
  return applied;
}
