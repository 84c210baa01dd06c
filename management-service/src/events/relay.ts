import type { Knex } from 'knex';
import { jetstream, subjects, traceHeaders, type Logger, type NatsConnection } from '@platform/shared';
import { publishWaves } from '../domain/publish-waves.ts';
import { startNotifiedLoop } from '../jobs/notified-loop.ts';
import { claimUnpublished, markPublished } from '../store/outbox.ts';

/** Any number that all replicas agree on: with the partition's index, the lock that makes one relay publish a partition at a time. */
const RELAY_LOCK = 720_413;

/**
 * How long a publish waits for JetStream's acknowledgement before it is sent again, and how often.
 * A publish in flight when nats-server dies is never acknowledged: with the client's default (5 s,
 * once) its event waited 5 s after a restart of NATS under bench:chaos. Sent again sooner, a
 * duplicate is dropped by JetStream by its Nats-Msg-Id (docs/adr/0033-load-and-chaos-benchmarks.md).
 */
const PUBLISH_ACK_TIMEOUT_MS = 1500;
const PUBLISH_ATTEMPTS = 3;

export type RelayOptions = {
  db: Knex;
  databaseUrl: string;
  nats: NatsConnection;
  logger: Logger;
  batch?: number;
  pollMs?: number;
  /** Partitions of the outbox by tenant (RELAY_PARTITIONS, the same on every replica); default 1. */
  partitions?: number;
  /** JetStream's publish; the connection's by default (a test wraps it to inject a slow acknowledgement). */
  publisher?: Pick<ReturnType<typeof jetstream>, 'publish'>;
};

/**
 * Publishes committed outbox rows to JetStream (`tenants.<tenant>.events`, `Nats-Msg-Id` = event id;
 * internal messages such as optimizer requests to their own subject) and marks them published in
 * the same transaction; woken by NOTIFY, polling as a fallback. The outbox is cut into partitions by
 * tenant (docs/adr/0032-relay-partitions.md): one replica at a time publishes a partition (an advisory
 * lock per partition), in outbox order, in waves with at most one message per entity, so that a
 * retried publish never lands after a later change of its entity (docs/adr/0054-publish-waves.md),
 * while replicas publish different partitions side by side. If NATS does not answer, nothing is
 * marked and the batch is tried again from its start (JetStream drops what it already stored).
 */
export async function startRelay(options: RelayOptions): Promise<{ stop: () => Promise<void> }> {
  const { db, logger } = options;
  const batch = options.batch ?? 1000;
  const count = options.partitions ?? 1;
  const js = options.publisher ?? jetstream(options.nats);
  // Replicas start their rounds at different partitions, so that they seldom meet at the same lock.
  let next = Math.floor(Math.random() * count);

  const publishBatch = (index: number) =>
    db.transaction(async (trx) => {
      const { rows } = await trx.raw('select pg_try_advisory_xact_lock(?, ?) as mine', [RELAY_LOCK, index]);
      if (!rows[0].mine) return 0;
      const events = await claimUnpublished(trx, batch, { index, count });
      if (events.length === 0) return 0;
      for (const wave of publishWaves(events))
        await Promise.all(
          wave.map((e) =>
            js.publish(e.nats_subject ?? subjects.tenantEvents(e.tenant_id), JSON.stringify(e.envelope), {
              msgID: e.event_id,
              timeout: PUBLISH_ACK_TIMEOUT_MS,
              retries: PUBLISH_ATTEMPTS,
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

  /** One round over every partition; true when one of them had a full batch (more may wait). */
  const publishRound = async () => {
    let full = false;
    for (let i = 0; i < count; i++) full = (await publishBatch((next + i) % count)) === batch || full;
    next = (next + 1) % count;
    return full;
  };

  return startNotifiedLoop({
    name: 'outbox relay',
    databaseUrl: options.databaseUrl,
    channel: 'outbox',
    pollMs: options.pollMs ?? 1000,
    logger,
    step: publishRound,
  });
}
