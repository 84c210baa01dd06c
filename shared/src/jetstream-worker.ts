import type { Logger } from './logger.ts';
import { messageCheck } from './messages.ts';
import { AckPolicy, DeliverPolicy, ensureStreams, jetstream, jetstreamManager, type NatsConnection } from './nats.ts';
import type { components } from './generated/events.ts';

type Schemas = components['schemas'];
/** The headers of a message (`Nats-Msg-Id`, …). */
export type MessageHeaders = { get: (name: string) => string } | undefined;

/**
 * What a handler makes of a message: done (acknowledged), dropped for good with the reason
 * (terminated), or not taken now and to be delivered again after `laterMs` (not acknowledged).
 */
export type WorkOutcome = void | { drop: string } | { laterMs: number };

export type JetStreamWorkerOptions<N extends keyof Schemas> = {
  nats: NatsConnection;
  logger: Logger;
  /** What the messages are, for log lines ("optimizer request"). */
  what: string;
  stream: string;
  subject: string;
  /** The durable consumer every replica shares, so each message is handled by one of them. */
  durable: string;
  /** The contract's schema of the messages: one that breaks it is dropped. */
  schema: N;
  /** How long a taken message may stay unacknowledged (a replica that died holding it) before another gets it. */
  ackWaitMs: number;
  /** Messages handled at once by this replica. */
  concurrency: number;
  /** Handles one message; a throw offers it again after a back-off (0.5 s doubling up to 30 s). */
  handle: (message: Schemas[N], headers: MessageHeaders) => Promise<WorkOutcome>;
};

/**
 * A durable JetStream consumer shared by the replicas of a service, for the internal messages
 * between the services (docs/adr/0012-outbound-events.md, 0021-optimizations.md). A message is
 * acknowledged only after its handler finished, so a replica that dies before leaves it to be
 * redelivered: handlers must be idempotent. A handler may also hand a message back unanswered, to
 * be delivered again later (to this replica or another): the optimizer does so for a tenant whose
 * queue is full, so that the consumer reads on to other tenants' messages. A message that is not JSON, breaks its schema or that
 * the handler drops is logged and terminated, never retried; one whose handler throws (a store or
 * NATS away) is offered again later. Terminated without a reason text: nats-server before 2.11
 * does not read `+TERM <reason>` as a termination and would redeliver it.
 */
export async function startJetStreamWorker<N extends keyof Schemas>(options: JetStreamWorkerOptions<N>): Promise<{ stop: () => Promise<void> }> {
  const { nats, logger, what } = options;
  const check = messageCheck(options.schema);
  await ensureStreams(nats);
  const jsm = await jetstreamManager(nats);
  await jsm.consumers
    .add(options.stream, {
      durable_name: options.durable,
      filter_subject: options.subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: options.ackWaitMs * 1_000_000,
    })
    .catch(() => undefined); // it exists already: the durable consumer remembers where it stopped
  const consumer = await jetstream(nats).consumers.get(options.stream, options.durable);
  type Message = NonNullable<Awaited<ReturnType<typeof consumer.next>>>;

  const drop = (message: Message, reason: string) => {
    logger.warn(`${what} dropped`, { seq: message.seq, reason });
    message.term();
  };
  const work = async (message: Message): Promise<void> => {
    let body: unknown;
    try {
      body = message.json();
    } catch {
      return drop(message, 'not JSON');
    }
    const checked = check(body);
    if (!checked.ok) return drop(message, `breaks the contract: ${checked.errors}`);
    try {
      const outcome = await options.handle(checked.message, message.headers);
      if (outcome && 'laterMs' in outcome) return message.nak(outcome.laterMs);
      if (outcome) return drop(message, outcome.drop);
      message.ack();
    } catch (error) {
      const delay = Math.min(30_000, 500 * 2 ** Math.min(message.info.deliveryCount - 1, 6));
      logger.warn(`${what} not handled; offered again later`, { seq: message.seq, error: (error as Error).message, retry_in_ms: delay });
      message.nak(delay);
    }
  };

  const messages = await consumer.consume({ max_messages: Math.max(64, options.concurrency * 2) });
  const running = new Set<Promise<void>>();
  const loop = (async () => {
    for await (const message of messages) {
      const job = work(message).finally(() => running.delete(job));
      running.add(job);
      if (running.size >= options.concurrency) await Promise.race(running);
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
