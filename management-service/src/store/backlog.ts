import type { Knex } from 'knex';

/** What waits in the management service's tables, read in one round trip when the metrics are scraped. */
export type Backlog = {
  outboxUnpublished: number;
  /** Age of the oldest unpublished outbox row (0 when there is none). */
  outboxOldestSeconds: number;
  /** Optimizer requests sent and neither answered nor given up on (their optimizations are PENDING). */
  optimizerRequestsPending: number;
  /** Broker instructions (deposits, orders, withdrawals) not settled yet. */
  brokerInstructionsPending: number;
  /** When the last nightly optimization batch finished, in seconds since the epoch; undefined before the first. */
  nightlyFinishedAt: number | undefined;
  nightlyRequested: number | undefined;
  /** When the last retention run finished (migration 020); undefined before the first. */
  retentionFinishedAt: number | undefined;
};

/** Every count uses the partial index of its table's waiting rows; run as the owning role, it sees every tenant. */
export async function readBacklog(db: Knex): Promise<Backlog> {
  const { rows } = await db.raw(`
    select
      (select count(*) from outbox where published_at is null)::int as outbox_unpublished,
      coalesce((select extract(epoch from now() - min(created_at)) from outbox where published_at is null), 0)::float8 as outbox_oldest_seconds,
      (select count(*) from optimization_requests where result_at is null and timed_out_at is null)::int as optimizer_requests_pending,
      (select count(*) from broker_instructions where settled_at is null)::int as broker_instructions_pending,
      extract(epoch from last_run.finished_at)::float8 as nightly_finished_at,
      last_run.requested as nightly_requested,
      extract(epoch from (select max(finished_at) from retention_runs))::float8 as retention_finished_at
    from (select 1) one
    left join lateral (select finished_at, requested from optimizer_nightly_runs order by day desc limit 1) last_run on true`);
  const row = rows[0];
  return {
    outboxUnpublished: row.outbox_unpublished,
    outboxOldestSeconds: Math.max(0, row.outbox_oldest_seconds),
    optimizerRequestsPending: row.optimizer_requests_pending,
    brokerInstructionsPending: row.broker_instructions_pending,
    nightlyFinishedAt: row.nightly_finished_at ?? undefined,
    nightlyRequested: row.nightly_requested ?? undefined,
    retentionFinishedAt: row.retention_finished_at ?? undefined,
  };
}
