import knex, { type Knex } from 'knex';
import { migrateLatest } from '@platform/management-service/store/migrate';

/** The URL of database `name` on the server that `adminUrl` reaches. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Creates database `name` unless it exists (`fresh`: drops it first). Returns its URL and a drop()
 * that removes it again, for a caller whose database lives only as long as it runs.
 */
export async function ensureDatabase(adminUrl: string, name: string, options: { fresh?: boolean } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  try {
    if (options.fresh) await admin.raw(`drop database if exists ${name} with (force)`);
    const { rows } = await admin.raw('select 1 from pg_database where datname = ?', [name]);
    if (rows.length === 0) await admin.raw(`create database ${name}`);
  } finally {
    await admin.destroy();
  }
  return {
    url: databaseUrl(adminUrl, name),
    drop: async () => {
      const again = knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
      try {
        await again.raw(`drop database if exists ${name} with (force)`);
      } finally {
        await again.destroy();
      }
    },
  };
}

/** Applies every migration of the three migrations folders (docs/architecture.md, "Who owns each table"). */
export async function migrate(db: Knex): Promise<string[]> {
  return migrateLatest(db);
}
