import knex, { type Knex } from 'knex';
import type { Sql } from '@platform/shared';

export type Db = Knex;

export function createDb(databaseUrl: string, poolMax: number): Db {
  return knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: poolMax } });
}

export async function databaseAnswers(db: Db): Promise<void> {
  await db.raw('select 1');
}

/** Statements written for the shared stores (`$1`, `$2`, … in order) run through knex, which binds `?`. */
export const knexSql =
  (trx: Knex.Transaction | Knex): Sql =>
  async (text, values) =>
    trx.raw(text.replace(/\$\d+/g, '?'), values as Knex.RawBinding[]);
