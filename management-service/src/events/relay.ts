import type { Knex } from 'knex';
import { jetstream, subjects, traceHeaders, type Logger, type NatsConnection } from '@platform/shared';
import { startNotifiedLoop } from '../jobs/notified-loop.ts';
import { claimUnpublished, markPublished, prunePublished } from '../store/outbox.ts';

/** Any number that all replicas agree on: the lock that makes one relay publish at a time. */
const RELAY_LOCK = 720_413;

export type RelayOptions = { db: Knex; databaseUrl: string; nats: NatsConnection; logger: Logger; batch?: number; pollMs?: number; retentionDays: number };

/**
 * Publishes committed outbox rows to JetStream (`tenants.<tenant>.events`, `Nats-Msg-Id` = event id;
 * internal messages such as optimizer requests to their own subject) and marks them published in
 * the same transaction; woken by NOTIFY, polling as a fallback. One replica publishes at a time
 * (advisory lock), in outbox order, so events of an entity keep the order of its changes. If NATS
 * does not answer, nothing is marked and the batch is tried again.
 */
export async function startRelay(options: RelayOptions): Promise<{ stop: () => Promise<void> }> {
  const { db, logger } = options;
  const batch = options.batch ?? 1000;
  const js = jetstream(options.nats);

  const publishBatch = () =>
    db.transaction(async (trx) => {
      const { rows } = await trx.raw('select pg_try_advisory_xact_lock(?) as mine', [RELAY_LOCK]);
      if (!rows[0].mine) return 0;
      const events = await claimUnpublished(trx, batch);
      if (events.length === 0) return 0;
      await Promise.all(
        events.map((e) =>
          js.publish(e.nats_subject ?? subjects.tenantEvents(e.tenant_id), JSON.stringify(e.envelope), {
            msgID: e.event_id,
            // The trace of the change that wrote the row (docs/adr/0024-observability.md).
            headers: traceHeaders(e.traceparent),
          }),
        ),
      );
      await markPublished(
        trx,
        events.map((e) => e.seq),
      );
      return events.length;
    });

  let lastPrune = 0;
  return startNotifiedLoop({
    name: 'outbox relay',
    databaseUrl: options.databaseUrl,
    channel: 'outbox',
    pollMs: options.pollMs ?? 1000,
    logger,
    step: async () => {
      const published = await publishBatch();
      if (Date.now() - lastPrune > 3_600_000) {
        lastPrune = Date.now();
        const pruned = await prunePublished(db, options.retentionDays);
        if (pruned > 0) logger.info('outbox pruned', { pruned });
      }
      return published === batch;
    },
  });
}
