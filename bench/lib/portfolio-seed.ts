// The seed of bench:queries: users and portfolios written by SQL in batches, ids in the stored
// format, a known number of pending withdrawals; and the stored id of a seeded user.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { round } from './harness.ts';

const BATCH = 50_000;

function progress(label: string, done: number, total: number, started: number): void {
  const width = 30;
  const filled = Math.round((done / total) * width);
  const rate = done / ((Date.now() - started) / 1000);
  process.stdout.write(
    `\r[bench] ${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done.toLocaleString('en')}/${total.toLocaleString('en')} ${Math.round(rate).toLocaleString('en')}/s`,
  );
  if (done === total) process.stdout.write('\n');
}

/** Ids in the stored format: type letter and 26 characters of the ULID alphabet. */
const idSql = (letter: string, n: string) => `'${letter}' || upper(substr(md5('${letter}' || ${n}::text), 1, 26))`;

export type SeedSizes = { tenant: string; portfolios: number; users: number; pending: number };

/** How many portfolios the seed gives a pending withdrawal (a non-zero divest_amount), spread evenly. */
export const pendingOf = (portfolios: number) => Math.min(1000, portfolios);

/** Seeds users and portfolios; the seconds it took. */
export async function seedPortfolios(pool: pg.Pool, { tenant, portfolios: PORTFOLIOS, users: USERS, pending: PENDING }: SeedSizes): Promise<number> {
  const PENDING_EVERY = Math.floor(PORTFOLIOS / PENDING);
  /** The seed's portfolio i has a pending withdrawal: exactly PENDING of them. */
  const IS_PENDING = `(i % ${PENDING_EVERY} = ${7 % PENDING_EVERY} and i <= ${PENDING * PENDING_EVERY})`;
  const started = Date.now();
  await pool.query(
    `insert into entities (tenant_id, id, type, version, doc, readable_by, modifiable_by, created_at, version_at)
     select $1, ${idSql('U', 'i')}, 'users', 1,
            jsonb_build_object('external_id', 'user-' || i, 'first_name', 'First' || i, 'last_name', 'Last' || (i % 1000), 'status', 'ACTIVE', 'feature_flags', '[]'::jsonb, 'products', '[]'::jsonb),
            array[${idSql('U', 'i')}], array[${idSql('U', 'i')}], now(), now()
       from generate_series(1, $2) i`,
    [tenant, USERS],
  );
  for (let from = 1; from <= PORTFOLIOS; from += BATCH) {
    const to = Math.min(PORTFOLIOS, from + BATCH - 1);
    await pool.query(
      `insert into entities (tenant_id, id, type, version, doc, readable_by, modifiable_by, created_at, version_at)
       select $1, ${idSql('P', 'i')}, 'portfolios', 1, doc, array[doc ->> 'owned_by_user_id'], array[doc ->> 'owned_by_user_id'],
              now() - (i || ' seconds')::interval, now()
         from (select i, jsonb_build_object(
                 'external_id', 'ext-' || i,
                 'name', 'Portfolio ' || (i % 9973),
                 'owned_by_user_id', ${idSql('U', `(1 + i % ${USERS})`)},
                 'base_currency', (array['EUR', 'USD', 'CHF', 'GBP'])[1 + i % 4],
                 'money_type', case when i % 10 = 0 then 'PAPER_MONEY' else 'REAL_MONEY' end,
                 'config', jsonb_build_object(
                   'manager', case when ${IS_PENDING} then 'ROBO_ADVISOR_DISCRETIONARY'
                                   else (array['USER_MANAGED', 'ROBO_ADVISOR_ADVISORY', 'ROBO_ADVISOR_DISCRETIONARY'])[1 + i % 3] end,
                   'manager_version', 1,
                   'manager_settings', jsonb_strip_nulls(jsonb_build_object(
                     'active', true,
                     'divest_amount', case when ${IS_PENDING} then (i % 5000) + 0.5 when i % 3 <> 0 then 0 end,
                     'suitability_profile_id', case when i % 20 = 1 then ${idSql('N', 'i')} end))),
                 'portfolio', jsonb_build_object('$EUR', i % 10000),
                 'status', 'ACTIVE', 'archived', false, 'funded_since', null) as doc
                 from generate_series($2::int, $3::int) i) s`,
      [tenant, from, to],
    );
    progress('seeding portfolios', to, PORTFOLIOS, started);
  }
  await pool.query('vacuum analyze entities');
  const { rows } = await pool.query(
    `select count(*)::int as pending from entities where type = 'portfolios' and platform_numeric(doc, '{config,manager_settings,divest_amount}') <> 0`,
  );
  if (rows[0].pending !== PENDING) throw new Error(`seeded ${rows[0].pending} pending withdrawals, not ${PENDING}`);
  return round((Date.now() - started) / 1000, 1);
}

/** The stored id of the seed's user n (md5-derived, as `idSql`), for `{U17}` placeholders. */
export const storedUserId = (n: number) => `U${createHash('md5').update(`U${n}`).digest('hex').slice(0, 26).toUpperCase()}`;
export const resolveUsers = (text: string) => text.replace(/\{U(\d+)\}/g, (_, n: string) => storedUserId(Number(n)));
