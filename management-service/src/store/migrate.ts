import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';

const migrationsDir = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Plain numbered SQL files in migrations/, applied in order by knex (with its lock and table). */
const sqlMigrations: Knex.MigrationSource<string> = {
  getMigrations: async () => (await readdir(migrationsDir)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort(),
  getMigrationName: (file) => file,
  getMigration: async (file) => {
    const sql = await readFile(migrationsDir + file, 'utf8');
    return {
      // knex reads `?` as a binding placeholder even without bindings; escaped, the file runs as written.
      up: (db: Knex) => db.raw(sql.replace(/\?/g, '\\?')),
      down: () => {
        throw new Error('migrations are forward only');
      },
    };
  },
};

/** Applies the pending migrations; returns the names applied. Safe to run from several replicas. */
export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: sqlMigrations, tableName: 'schema_migrations' })) as [number, string[]];
  return applied;
}
