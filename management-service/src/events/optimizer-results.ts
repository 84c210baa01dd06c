import type { Knex } from 'knex';
import {
  AckPolicy,
  DeliverPolicy,
  ensureStreams,
  jetstream,
  jetstreamManager,
  messageCheck,
  streams,
  subjects,
  type Logger,
  type NatsConnection,
} from '@platform/shared';
import { storeResult, type OptimizerResult } from '../flows/optimization.ts';
import { inTenant } from '../store/tenant-scope.ts';

export type OptimizerResultsOptions = {
  db: Knex;
  nats: NatsConnection;
  logger: Logger;
  /** Durable consumer name; every replica uses the same one, so each result is handled by one of them. */
  durable?: string;
  /** How long a result may stay unacknowledged (a replica that died holding it) before another replica gets it. */
  ackWaitMs?: number;
  /** Results handled at the same time by this replica (each in its own transaction). */
  concurrency?: number;
  now?: () => Date;
};

const checkResult = messageCheck('OptimizerResult');

/**
 * The management service's side of platform.optimizer.results (docs/adr/0021-optimizations.md): a durable JetStream
 * consumer shared by every replica. A result is acknowledged only after the transaction that stores it committed, so a
 * replica that dies before leaves it to be redelivered, and storing is idempotent per request (a result delivered twice
 * is stored once). A message that is not a result of the contract (or whose Nats-Msg-Id is not `<request_id>:result`)
 * is logged and terminated, never retried; one that fails for another reason (the database away) is offered again.
 * Terminated without a reason text: servers before 2.11 do not read `+TERM <reason>` as a termination.
 */
export async function startOptimizerResults(options: OptimizerResultsOptions): Promise<{ stop: () => Promise<void> }> {
  const { db, nats, logger } = options;
  const durable = options.durable ?? 'management-optimizer-results';
  const now = options.now ?? (() => new Date());
  const concurrency = options.concurrency ?? 8;
  await ensureStreams(nats);
  const jsm = await jetstreamManager(nats);
  await jsm.consumers
    .add(streams.platform.name, {
      durable_name: durable,
      filter_subject: subjects.optimizerResults,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: (options.ackWaitMs ?? 30_000) * 1_000_000,
    })
    .catch(() => undefined); // it exists already: the durable consumer remembers where it stopped
  const consumer = await jetstream(nats).consumers.get(streams.platform.name, durable);
  type Message = NonNullable<Awaited<ReturnType<typeof consumer.next>>>;
  const messages = await consumer.consume({ max_messages: 64 });

  const handle = async (message: Message): Promise<void> => {
    let body: unknown;
    try {
      body = message.json();
    } catch {
      logger.warn('optimizer result is not JSON; dropped', { seq: message.seq });
      message.term();
      return;
    }
    const checked = checkResult(body);
    if (!checked.ok) {
      logger.warn('optimizer result breaks the contract; dropped', { seq: message.seq, errors: checked.errors });
      message.term();
      return;
    }
    const result = checked.message as OptimizerResult;
    const messageId = message.headers?.get('Nats-Msg-Id') ?? '';
    if (messageId !== `${result.request_id}:result`) {
      const why = `Nats-Msg-Id "${messageId}" is not "${result.request_id}:result"`;
      logger.warn('optimizer result breaks the contract; dropped', { seq: message.seq, errors: why });
      message.term();
      return;
    }
    const context = { tenant: result.tenant_id, request: result.request_id, optimization: result.optimization_id, status: result.status };
    try {
      const outcome = await inTenant(db, result.tenant_id, (trx, tenant) => storeResult(trx, tenant, result, now().toISOString()));
      message.ack();
      if (outcome === 'STORED') logger.info('optimization result stored', context);
      else logger.info('optimization result not stored', { ...context, outcome });
    } catch (error) {
      const delay = Math.min(30_000, 1_000 * 2 ** Math.min(message.info.deliveryCount - 1, 5));
      logger.warn('optimization result could not be stored; offered again later', { ...context, error: (error as Error).message, retry_in_ms: delay });
      message.nak(delay);
    }
  };

  const running = new Set<Promise<void>>();
  const loop = (async () => {
    for await (const message of messages) {
      const work = handle(message).finally(() => running.delete(work));
      running.add(work);
      if (running.size >= concurrency) await Promise.race(running);
    }
  })();

  return {
    stop: async () => {
      await messages.close();
      await loop;
      await Promise.all(running);
    },
  };
}
