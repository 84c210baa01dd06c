import type { Knex } from 'knex';
import pg from 'pg';
import { jetstream, subjects, type Logger, type NatsConnection } from '@platform/shared';
import { claimUnpublished, markPublished, prunePublished } from '../store/outbox.ts';

/** Any number that all replicas agree on: the lock that makes one relay publish at a time. */
const RELAY_LOCK = 720_413;

export type RelayOptions = { db: Knex; databaseUrl: string; nats: NatsConnection; logger: Logger; batch?: number; pollMs?: number; retentionDays: number };

/**
 * Publishes committed outbox rows to JetStream (`tenants.<tenant>.events`, `Nats-Msg-Id` = event id)
 * and marks them published in the same transaction; woken by NOTIFY, polling as a fallback. One
 * replica publishes at a time (advisory lock), in outbox order, so events of an entity keep the
 * order of its changes. If NATS does not answer, nothing is marked and the batch is tried again.
 */
export async function startRelay(options: RelayOptions): Promise<{ stop: () => Promise<void> }> {
  const { db, logger } = options;
  const batch = options.batch ?? 1000;
  const pollMs = options.pollMs ?? 1000;
  const js = jetstream(options.nats);
  let running = true;
  // A NOTIFY that arrives while a batch is being published must not be lost: remember it.
  let notified = false;
  let wake: () => void = () => undefined;
  const listener = new pg.Client({ connectionString: options.databaseUrl });
  listener.on('notification', () => {
    notified = true;
    wake();
  });
  listener.on('error', (error) => logger.warn('outbox listener lost; polling only', { error: error.message }));
  await listener.connect();
  await listener.query('listen outbox');

  const publishBatch = () =>
    db.transaction(async (trx) => {
      const { rows } = await trx.raw('select pg_try_advisory_xact_lock(?) as mine', [RELAY_LOCK]);
      if (!rows[0].mine) return 0;
      const events = await claimUnpublished(trx, batch);
      if (events.length === 0) return 0;
      await Promise.all(events.map((e) => js.publish(subjects.tenantEvents(e.tenant_id), JSON.stringify(e.envelope), { msgID: e.envelope.id })));
      await markPublished(trx, events.map((e) => e.seq));
      return events.length;
    });

  let lastPrune = 0;
  let failures = 0;
  const loop = (async () => {
    while (running) {
      notified = false;
      let published = 0;
      try {
        published = await publishBatch();
        failures = 0;
        if (Date.now() - lastPrune > 3_600_000) {
          lastPrune = Date.now();
          const pruned = await prunePublished(db, options.retentionDays);
          if (pruned > 0) logger.info('outbox pruned', { pruned });
        }
      } catch (error) {
        failures++;
        logger.warn('outbox relay failed; retrying', { error: (error as Error).message, failures });
      }
      if (published === batch || (notified && failures === 0)) continue;
      const delay = failures > 0 ? Math.min(5_000, 250 * 2 ** Math.min(failures, 5)) : pollMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (!running) wake();
      });
    }
  })();

  return {
    stop: async () => {
      running = false;
      wake();
      await loop;
      await listener.end();
    },
  };
}
