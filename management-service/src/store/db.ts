import { createRequire } from 'node:module';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import type { Sql } from '@platform/shared';
import { BatchingClient } from './batching-client.ts';

export type Db = Knex;

// knex's own Postgres dialect, given a driver whose connections batch (docs/adr/0031-http-hot-path.md).
const PostgresDialect = createRequire(import.meta.url)('knex/lib/dialects/postgres/index.js') as new (config: Knex.Config) => object;
const batchingDriver = Object.create(pg, { Client: { value: BatchingClient } }) as typeof pg;

class BatchingPostgres extends PostgresDialect {
  _driver() {
    return batchingDriver;
  }
}

export function createDb(databaseUrl: string, poolMax: number): Db {
  return knex({ client: BatchingPostgres as unknown as Knex.Config['client'], connection: databaseUrl, pool: { min: 0, max: poolMax } });
}

export async function databaseAnswers(db: Db): Promise<void> {
  await db.raw('select 1');
}

/** Statements written for the shared stores (`$1`, `$2`, … in order) run through knex, which binds `?`. */
export const knexSql =
  (trx: Knex.Transaction | Knex): Sql =>
  async (text, values) =>
    trx.raw(text.replace(/\$\d+/g, '?'), values as Knex.RawBinding[]);
