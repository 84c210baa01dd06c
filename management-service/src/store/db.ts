import { createRequire } from 'node:module';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import type { Sql } from '@platform/shared';
import { BatchingClient } from './batching-client.ts';

export type Db = Knex;

// knex's own Postgres dialect, given a driver whose connections batch (docs/adr/0031-http-hot-path.md).
const PostgresDialect = createRequire(import.meta.url)('knex/lib/dialects/postgres/index.js') as new (config: Knex.Config) => object;
/** Connections that prepare no statement by name (DATABASE_PREPARED_STATEMENTS=false). */
class UnnamedBatchingClient extends BatchingClient {
  override readonly preparedLimit = 0;
}
const dialect = (Client: typeof BatchingClient) => {
  const driver = Object.create(pg, { Client: { value: Client } }) as typeof pg;
  return class BatchingPostgres extends PostgresDialect {
    _driver() {
      return driver;
    }
  };
};
const dialects = { named: dialect(BatchingClient), unnamed: dialect(UnnamedBatchingClient) };

export function createDb(databaseUrl: string, poolMax: number, options: { preparedStatements?: boolean } = {}): Db {
  const client = dialects[options.preparedStatements === false ? 'unnamed' : 'named'];
  return knex({ client: client as unknown as Knex.Config['client'], connection: databaseUrl, pool: { min: 0, max: poolMax } });
}

export async function databaseAnswers(db: Db): Promise<void> {
  await db.raw('select 1');
}

/** Statements written for the shared stores (`$1`, `$2`, … in order) run through knex, which binds `?`. */
export const knexSql =
  (trx: Knex.Transaction | Knex): Sql =>
  async (text, values) =>
    trx.raw(text.replace(/\$\d+/g, '?'), values as Knex.RawBinding[]);
