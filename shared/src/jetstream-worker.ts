import type { JsMsg } from '@nats-io/jetstream';
import type { Logger } from './logger.ts';
import { messageCheck } from './messages.ts';
import { AckPolicy, DeliverPolicy, ensureStreams, jetstream, jetstreamManager, type NatsConnection } from './nats.ts';
import type { components } from '@platform/api-types/events';

type Schemas = components['schemas'];
/** The headers of a message (`Nats-Msg-Id`, …). */
export type MessageHeaders = { get: (name: string) => string } | undefined;

/**
 * What a handler makes of a message: done (acknowledged), dropped for good with the reason
 * (terminated), or not taken now and to be delivered again after `laterMs` (not acknowledged).
 */
export type WorkOutcome = void | { drop: string } | { laterMs: number };

export type MessageWorkOptions<N extends keyof Schemas> = {
  logger: Logger;
  /** What the messages are, for log lines ("optimizer request"). */
  what: string;
  /** The contract's schema of the messages: one that breaks it is dropped. */
  schema: N;
  /** How long a taken message may stay unacknowledged (a replica that died holding it) before another gets it. */
  ackWaitMs: number;
  /** Handles one message; a throw offers it again after a back-off (0.5 s doubling up to 30 s). */
  handle: (message: Schemas[N], headers: MessageHeaders) => Promise<WorkOutcome>;
};

export type JetStreamWorkerOptions<N extends keyof Schemas> = MessageWorkOptions<N> & {
  nats: NatsConnection;
  stream: string;
  subject: string;
  /** The durable consumer every replica shares, so each message is handled by one of them. */
  durable: string;
  /** Messages handled at once by this replica. */
  concurrency: number;
};

/**
 * Handles one delivered message as every worker of the internal messages does: a message that is
 * not JSON, breaks its schema or that the handler drops is logged and terminated, never retried;
 * one whose handler throws (a store or NATS away) is offered again later; one the handler hands
 * back is offered again after the time it asks; otherwise it is acknowledged once the handler
 * finished. While the handler runs (a message may wait in a queue before its turn), the message
 * is marked in progress every half ack wait, so that no other replica is given it meanwhile.
 * Terminated without a reason text: nats-server before 2.11 does not read `+TERM <reason>` as a
 * termination and would redeliver it.
 */
export function messageWork<N extends keyof Schemas>(options: MessageWorkOptions<N>): (message: JsMsg) => Promise<void> {
  const { logger, what } = options;
  const check = messageCheck(options.schema);
  const drop = (message: JsMsg, reason: string) => {
    logger.warn(`${what} dropped`, { seq: message.seq, reason });
    message.term();
  };
  return async (message) => {
    let body: unknown;
    try {
      body = message.json();
    } catch {
      return drop(message, 'not JSON');
    }
    const checked = check(body);
    if (!checked.ok) return drop(message, `breaks the contract: ${checked.errors}`);
    const inProgress = setInterval(() => message.working(), options.ackWaitMs / 2);
    try {
      const outcome = await options.handle(checked.message, message.headers);
      if (outcome && 'laterMs' in outcome) return message.nak(outcome.laterMs);
      if (outcome) return drop(message, outcome.drop);
      message.ack();
    } catch (error) {
      const delay = Math.min(30_000, 500 * 2 ** Math.min(message.info.deliveryCount - 1, 6));
      logger.warn(`${what} not handled; offered again later`, { seq: message.seq, error: (error as Error).message, retry_in_ms: delay });
      message.nak(delay);
    } finally {
      clearInterval(inProgress);
    }
  };
}

/**
 * The durable consumer of `subject` in `stream`, made at its first use with explicit
 * acknowledgements, from the stream's first message on. One that exists already is used as it is:
 * it remembers where it stopped.
 */
export async function durableConsumer(nats: NatsConnection, options: { stream: string; subject: string; durable: string; ackWaitMs: number }) {
  const jsm = await jetstreamManager(nats);
  await jsm.consumers
    .add(options.stream, {
      durable_name: options.durable,
      filter_subject: options.subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: options.ackWaitMs * 1_000_000,
    })
    .catch(() => undefined); // it exists already, or the lookup below says why not
  return jetstream(nats).consumers.get(options.stream, options.durable);
}

/**
 * A durable JetStream consumer shared by the replicas of a service, for the internal messages
 * between the services (docs/adr/0012-outbound-events.md, 0021-optimizations.md), each message
 * handled by `messageWork`. A message is acknowledged only after its handler finished, so a
 * replica that dies before leaves it to be redelivered: handlers must be idempotent.
 */
export async function startJetStreamWorker<N extends keyof Schemas>(options: JetStreamWorkerOptions<N>): Promise<{ stop: () => Promise<void> }> {
  await ensureStreams(options.nats);
  const consumer = await durableConsumer(options.nats, options);
  const work = messageWork(options);

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
