import type { Knex } from 'knex';

/**
 * The deletions of the retention job (docs/adr/0061-retention.md). Each removes at most `limit` rows
 * past `cutoff` in one short statement, oldest first, and answers how many it removed: the job
 * repeats it until a batch comes back short, so no statement holds its row locks for long.
 */
export type BatchDelete = (db: Knex, cutoff: Date, limit: number) => Promise<number>;

const count = (result: { rowCount?: number | null }) => result.rowCount ?? 0;

/** Idempotency-Keys whose replay window (IDEMPOTENCY_RETENTION_DAYS, set at insert as expires_at) ended before `cutoff`. */
export const deleteIdempotencyKeys: BatchDelete = async (db, cutoff, limit) =>
  count(
    await db.raw(
      `delete from idempotency_keys where ctid = any(array(
         select ctid from idempotency_keys where expires_at < ? order by expires_at limit ?))`,
      [cutoff, limit],
    ),
  );

/** Rate-limit counters whose window (`expire`, epoch milliseconds) ended before `cutoff`: the next request starts a new one. */
export const deleteRateLimitCounters: BatchDelete = async (db, cutoff, limit) =>
  count(
    await db.raw(
      `delete from rate_limits where key in (
         select key from rate_limits where expire < ? order by expire limit ?)`,
      [cutoff.getTime(), limit],
    ),
  );

/** Access-token revocations no access token alive at `cutoff` can need (they expire a token lifetime after the revocation). */
export const deleteTokenRevocations: BatchDelete = async (db, cutoff, limit) =>
  count(
    await db.raw(
      `delete from token_revocations where (tenant_id, subject) in (
         select tenant_id, subject from token_revocations where expires_at <= ? order by expires_at limit ?)`,
      [cutoff, limit],
    ),
  );

/**
 * Refresh-token chains whose every token expired before `cutoff`, with their tokens, a chain per
 * statement's batch. A whole chain at once: a spent token of a chain still alive must stay, since
 * presenting it again revokes the chain (docs/adr/0061-retention.md). A chain is a day old at least, so
 * one whose first token is still being written is never taken for an empty one.
 */
export const deleteRefreshTokenChains: BatchDelete = async (db, cutoff, limit) =>
  db.transaction(async (trx): Promise<number> => {
    const { rows } = await trx.raw(
      `select f.id from refresh_token_families f
        where f.created_at < ?::timestamptz - interval '1 day'
          and not exists (select 1 from refresh_tokens r where r.family_id = f.id and r.expires_at >= ?)
        order by f.created_at limit ? for update skip locked`,
      [cutoff, cutoff, limit],
    );
    const ids = (rows as { id: string }[]).map((r) => r.id);
    if (ids.length === 0) return 0;
    await trx('refresh_tokens').whereIn('family_id', ids).delete();
    return trx('refresh_token_families').whereIn('id', ids).delete();
  });

/**
 * Outbox rows published and written before `cutoff` (OUTBOX_RETENTION_DAYS): gone from `GET /events/`,
 * which then starts at the oldest kept row. In `seq` order through the primary key; rows not yet
 * published stay whatever their age, so the relay still sends them. The same statement raises each
 * tenant's horizon (migration 020) to the highest place it removed, so the feed can tell a cursor
 * from before it.
 */
export const deletePublishedOutbox: BatchDelete = async (db, cutoff, limit) => {
  const { rows } = await db.raw(
    `with gone as (
       delete from outbox where seq in (
         select seq from outbox where published_at is not null and created_at < ? order by seq limit ?)
       returning tenant_id, xid, seq),
     horizon as (
       insert into outbox_retention_horizons (tenant_id, xid, seq)
       select distinct on (tenant_id) tenant_id, xid, seq from gone order by tenant_id, xid desc, seq desc
       on conflict (tenant_id) do update set xid = excluded.xid, seq = excluded.seq
         where (excluded.xid, excluded.seq) > (outbox_retention_horizons.xid, outbox_retention_horizons.seq))
     select count(*)::int as n from gone`,
    [cutoff, limit],
  );
  return rows[0].n as number;
};

/**
 * The earlier versions of users erased before `cutoff` (migration 019's ledger): the last version,
 * which marks the erasure and which the user's portfolios still name, stays. Tenant by tenant, in
 * each one's scope, as entity_versions and the ledger are under forced row-level security.
 */
export const deleteErasedUserVersions: BatchDelete = async (db, cutoff, limit) => {
  let removed = 0;
  for (const tenant of (await db('tenants').pluck('id')) as string[]) {
    if (removed >= limit) break;
    removed += await db.transaction(async (trx) => {
      await trx.raw(`select set_config('app.tenant_id', ?, true)`, [tenant]);
      return count(
        await trx.raw(
          `delete from entity_versions where ctid = any(array(
             select v.ctid from user_erasures e
               join entities u on u.tenant_id = e.tenant_id and u.id = e.user_id
               join entity_versions v on v.tenant_id = e.tenant_id and v.id = e.user_id and v.version < u.version
              where e.erased_at < ? order by e.erased_at, v.version limit ?))`,
          [cutoff, limit - removed],
        ),
      );
    });
  }
  return removed;
};

// ------------------------------------------------------------------ runs (migration 020)

/** Any number that all replicas agree on: the lock that lets one replica at a time run the retention job. */
const RETENTION_LOCK = 720_416;

/** Takes the retention job's lock for the caller's transaction; false when another replica holds it. */
export async function tryRetentionLock(trx: Knex.Transaction): Promise<boolean> {
  const { rows } = await trx.raw('select pg_try_advisory_xact_lock(?) as mine', [RETENTION_LOCK]);
  return rows[0].mine === true;
}

/** Whether the job completed a run on this UTC day (YYYY-MM-DD). */
export async function retentionRunDone(trx: Knex.Transaction, day: string): Promise<boolean> {
  return (await trx('retention_runs').select('day').where({ day }).first()) !== undefined;
}

/** Records a completed run; a second run the same day (the operator's command) replaces the day's row. */
export async function recordRetentionRun(
  trx: Knex.Transaction,
  run: { day: string; started_at: string; finished_at: string; deleted: Record<string, number> },
): Promise<void> {
  await trx('retention_runs')
    .insert({ ...run, deleted: JSON.stringify(run.deleted) })
    .onConflict('day')
    .merge();
}
