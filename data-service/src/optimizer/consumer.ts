import {
  activeTraceparent,
  jetstream,
  startJetStreamWorker,
  streams,
  subjects,
  traceHeaders,
  type Logger,
  type NatsConnection,
  type Tracing,
} from '@platform/shared';
import type { Optimizer, OptimizerRequest, OptimizerResult } from './engine.ts';
import type { FactsReader } from './instruments.ts';

export type OptimizerConsumerOptions = {
  nats: NatsConnection;
  optimize: Optimizer;
  /** The store's facts of the given ISINs for the tenant (see instruments.ts). */
  facts: FactsReader;
  logger: Logger;
  /** Durable consumer name; every replica uses the same one, so each request is solved by one of them. */
  durable?: string;
  /** How long a request may stay unacknowledged (a replica that died holding it) before another gets it. */
  ackWaitMs?: number;
  /** Requests handled at once (default 8). */
  concurrency?: number;
  now?: () => Date;
  /** Continues the trace of a request's `traceparent` header into its log lines and its result's header. */
  tracing?: Tracing;
  /** Each solve's time by the outcome's status (docs/adr/0024-observability.md). */
  solved?: (status: string, seconds: number) => void;
};

/** The ISINs a request is about: its instrument holdings and its model portfolio. */
export const requestIsins = (request: OptimizerRequest): string[] => [
  ...new Set([...Object.keys(request.holdings).filter((k) => !k.startsWith('$')), ...Object.keys(request.model_portfolio)]),
];

/**
 * The optimizer's side of platform.optimizer.requests (docs/adr/0020-optimizer-model.md): a durable
 * JetStream consumer shared by every replica. A request is acknowledged only after its result was
 * stored by the stream (`Nats-Msg-Id` = `<request_id>:result`, so a request solved twice after a
 * crash publishes one result); a replica that dies before that leaves it to be redelivered. A
 * message that is not a request of the contract is dropped, never retried. Several requests run at
 * once: a solve holds the event loop, but reading the facts and publishing the result wait on
 * DuckDB, Postgres and NATS, which overlap with the next solve.
 */
export function startOptimizerConsumer(options: OptimizerConsumerOptions): Promise<{ stop: () => Promise<void> }> {
  const { nats, logger } = options;
  const now = options.now ?? (() => new Date());
  const js = jetstream(nats);

  const answer = async (request: OptimizerRequest, logger: Logger): Promise<OptimizerResult> => {
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
    options.solved?.(result.status, (performance.now() - started) / 1000);
    return result;
  };

  return startJetStreamWorker({
    nats,
    logger,
    what: 'optimizer request',
    stream: streams.platform.name,
    subject: subjects.optimizerRequests,
    durable: options.durable ?? 'optimizer',
    schema: 'OptimizerRequest',
    ackWaitMs: options.ackWaitMs ?? 30_000,
    concurrency: options.concurrency ?? 8,
    handle: async (request, headers) => {
      const solve = async (log: Logger) => {
        const result = await answer(request, log);
        const published = { msgID: `${result.request_id}:result`, headers: traceHeaders(activeTraceparent()) };
        await js.publish(subjects.optimizerResults, JSON.stringify(result), published);
      };
      const traceparent = headers?.get('traceparent');
      await (options.tracing ? options.tracing.inSpan('optimizer request', traceparent, logger, solve) : solve(logger));
    },
  });
}
