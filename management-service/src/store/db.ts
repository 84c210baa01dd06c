import knex, { type Knex } from 'knex';

export type Db = Knex;

export function createDb(databaseUrl: string, poolMax: number): Db {
  return knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: poolMax } });
}

export async function databaseAnswers(db: Db): Promise<void> {
  await db.raw('select 1');
}
