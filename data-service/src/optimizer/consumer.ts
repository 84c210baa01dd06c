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
import type { InstrumentFacts, Optimizer, OptimizerRequest, OptimizerResult } from './engine.ts';

export type OptimizerConsumerOptions = {
  nats: NatsConnection;
  optimize: Optimizer;
  /** The store's facts of the given ISINs for the tenant (see instruments.ts). */
  facts: (tenantId: string, isins: readonly string[]) => Promise<ReadonlyMap<string, InstrumentFacts>>;
  logger: Logger;
  /** Durable consumer name; every replica uses the same one, so each request is solved by one of them. */
  durable?: string;
  /** How long a request may stay unacknowledged (a replica that died holding it) before another gets it. */
  ackWaitMs?: number;
  /** Requests handled at once (default 8). */
  concurrency?: number;
  /** Delay before a request that could not be answered (store or NATS trouble) is offered again. */
  retryMs?: number;
  now?: () => Date;
};

const checkRequest = messageCheck('OptimizerRequest');

/** The ISINs a request is about: its instrument holdings and its model portfolio. */
export const requestIsins = (request: OptimizerRequest): string[] => [
  ...new Set([...Object.keys(request.holdings).filter((k) => !k.startsWith('$')), ...Object.keys(request.model_portfolio)]),
];

/**
 * The optimizer's side of platform.optimizer.requests (docs/adr/0020-optimizer-model.md): a durable
 * JetStream consumer shared by every replica. A request is acknowledged only after its result was
 * stored by the stream (`Nats-Msg-Id` = `<request_id>:result`, so a request solved twice after a
 * crash publishes one result); a replica that dies before that leaves it to be redelivered. A
 * message that is not a request of the contract is terminated with the reason, never retried.
 */
export async function startOptimizerConsumer(options: OptimizerConsumerOptions): Promise<{ stop: () => Promise<void> }> {
  const { nats, logger } = options;
  const durable = options.durable ?? 'optimizer';
  const now = options.now ?? (() => new Date());
  await ensureStreams(nats);
  const jsm = await jetstreamManager(nats);
  await jsm.consumers
    .add(streams.platform.name, {
      durable_name: durable,
      filter_subject: subjects.optimizerRequests,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: (options.ackWaitMs ?? 30_000) * 1_000_000,
    })
    .catch(() => undefined); // it exists already: the durable consumer remembers where it stopped
  const js = jetstream(nats);
  const consumer = await js.consumers.get(streams.platform.name, durable);

  const answer = async (request: OptimizerRequest): Promise<OptimizerResult> => {
    const facts = await options.facts(request.tenant_id, requestIsins(request));
    const started = performance.now();
    let outcome: ReturnType<Optimizer>;
    try {
      outcome = options.optimize(request, facts);
    } catch (error) {
      logger.error('optimizer failed', { tenant: request.tenant_id, request: request.request_id, error: (error as Error).message });
      outcome = { status: 'FAILURE', is_recommended: false, orders: {}, detail: 'the optimizer failed on this request' };
    }
    const result: OptimizerResult = {
      request_id: request.request_id,
      tenant_id: request.tenant_id,
      portfolio_id: request.portfolio_id,
      optimization_id: request.optimization_id,
      status: outcome.status,
      is_recommended: outcome.is_recommended,
      orders: outcome.orders,
      solved_at: now().toISOString(),
      ...(outcome.detail === undefined ? {} : { detail: outcome.detail }),
    };
    logger.info('optimization solved', {
      tenant: request.tenant_id,
      request: request.request_id,
      optimization: request.optimization_id,
      status: result.status,
      orders: Object.keys(result.orders).length,
      solve_ms: Math.round(performance.now() - started),
    });
    return result;
  };

  type Message = NonNullable<Awaited<ReturnType<typeof consumer.next>>>;
  const handle = async (message: Message): Promise<void> => {
    let body: unknown;
    try {
      body = message.json();
    } catch {
      logger.warn('optimizer request is not JSON; dropped', { seq: message.seq });
      message.term();
      return;
    }
    const checked = checkRequest(body);
    if (!checked.ok) {
      logger.warn('optimizer request breaks the contract; dropped', { seq: message.seq, errors: checked.errors });
      message.term();
      return;
    }
    try {
      const result = await answer(checked.message);
      await js.publish(subjects.optimizerResults, JSON.stringify(result), { msgID: `${result.request_id}:result` });
      message.ack();
    } catch (error) {
      logger.warn('optimizer request not answered; offered again later', { request: checked.message.request_id, error: (error as Error).message });
      message.nak(options.retryMs ?? 2_000);
    }
  };

  // Several requests at a time: a solve holds the event loop, but reading the facts and publishing
  // the result wait on DuckDB, Postgres and NATS, which overlap with the next solve.
  const concurrency = options.concurrency ?? 8;
  const messages = await consumer.consume({ max_messages: 64 });
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
