// Robo-advised portfolios by the hundred thousand in seconds: one portfolio made through the
// interface (so that its document is what the service writes), then copied by SQL in batches with
// ids in the stored format, each copy with its first version, as bench/lib/portfolio-seed.ts seeds.
import type pg from 'pg';

const BATCH = 50_000;

/** Ids in the stored format: the type letter and 26 characters of the ULID alphabet (hex digits are). */
const idSql = (prefix: string, n: string) => `'P' || upper(substr(md5('${prefix}-' || ${n}::text), 1, 26))`;

/** Copies the portfolio `template` of `tenant` `count` times; the seconds it took. `prefix` keeps the ids of two seeds apart. */
export async function copyPortfolio(pool: pg.Pool, options: { tenant: string; template: string; count: number; prefix: string }): Promise<number> {
  const { tenant, template, count, prefix } = options;
  const started = Date.now();
  for (let from = 1; from <= count; from += BATCH) {
    const to = Math.min(count, from + BATCH - 1);
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(
        `insert into entities (tenant_id, id, type, parent_id, version, doc, deleted, readable_by, modifiable_by, created_at, version_at, version_author_id)
         select e.tenant_id, ${idSql(prefix, 'i')}, e.type, e.parent_id, 1, (e.doc - 'external_id') || jsonb_build_object('name', 'Robo ' || i),
                false, e.readable_by, e.modifiable_by, e.created_at, e.version_at, e.version_author_id
           from entities e, generate_series($3::int, $4::int) i
          where e.tenant_id = $1 and e.id = $2`,
        [tenant, template, from, to],
      );
      await client.query(
        `insert into entity_versions (tenant_id, id, version, doc, deleted, version_at, version_author_id)
         select tenant_id, id, 1, doc, deleted, version_at, version_author_id
           from entities where tenant_id = $1 and id in (select ${idSql(prefix, 'i')} from generate_series($2::int, $3::int) i)`,
        [tenant, from, to],
      );
      await client.query('commit');
    } catch (error) {
      await client.query('rollback');
      throw error;
    } finally {
      client.release();
    }
  }
  await pool.query('analyze entities');
  return Math.round((Date.now() - started) / 100) / 10;
}
