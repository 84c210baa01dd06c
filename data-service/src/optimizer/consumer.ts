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
  type WorkOutcome,
} from '@platform/shared';
import type { OptimizerRequest, OptimizerResult, Outcome } from './engine.ts';
import type { FactsReader } from './instruments.ts';
import { EngineFailed, OptimizerClosed, TenantQueueFull, type OptimizerScheduler } from './solving.ts';

export type OptimizerConsumerOptions = {
  nats: NatsConnection;
  /** Where requests are solved: worker threads taken fairly by tenant. The consumer closes it when it stops. */
  scheduler: OptimizerScheduler;
  /** The store's facts of the given ISINs for the tenant (see instruments.ts). */
  facts: FactsReader;
  logger: Logger;
  /** Durable consumer name; every replica uses the same one, so each request is solved by one of them. */
  durable?: string;
  /** How long a request may stay unacknowledged (a replica that died holding it) before another gets it. */
  ackWaitMs?: number;
  /**
   * Requests held at once: solving, waiting in the tenants' queues, reading facts or publishing
   * (default 8). Above the slots and one tenant's queue, so that a tenant with a full queue leaves
   * room to read on to other tenants' requests.
   */
  concurrency?: number;
  now?: () => Date;
  /** Continues the trace of a request's `traceparent` header into its log lines and its result's header. */
  tracing?: Tracing;
  /** Each solve's time on its thread by the outcome's status (docs/adr/0024-observability.md). */
  solved?: (status: string, seconds: number) => void;
};

/** The ISINs a request is about: its instrument holdings and its model portfolio. */
export const requestIsins = (request: OptimizerRequest): string[] => [
  ...new Set([...Object.keys(request.holdings).filter((k) => !k.startsWith('$')), ...Object.keys(request.model_portfolio)]),
];

const ENGINE_FAILED: Outcome = { status: 'FAILURE', is_recommended: false, orders: {}, detail: 'the optimizer failed on this request' };

/**
 * The optimizer's side of platform.optimizer.requests (docs/adr/0020-optimizer-model.md): a durable
 * JetStream consumer shared by every replica. A request is acknowledged only after its result was
 * stored by the stream (`Nats-Msg-Id` = `<request_id>:result`, so a request solved twice after a
 * crash publishes one result); a replica that dies before that leaves it to be redelivered. A
 * message that is not a request of the contract is dropped, never retried.
 *
 * Solves run on worker threads through the scheduler's per-tenant fair queue, never on the event
 * loop. A request of a tenant whose queue is full is handed back to JetStream unanswered, to come
 * again later, so the consumer reads on to other tenants' requests: a tenant's flood delays
 * another tenant's request by at most the solves already running. A request still waiting or
 * solving when the consumer stops is handed back at once (not acknowledged), for another replica
 * or the next start.
 */
export async function startOptimizerConsumer(options: OptimizerConsumerOptions): Promise<{ stop: () => Promise<void> }> {
  const { nats, logger, scheduler } = options;
  const now = options.now ?? (() => new Date());
  const js = jetstream(nats);

  /** The result, or when to offer the request again (its tenant's queue is full, or the service stops). */
  const answer = async (request: OptimizerRequest, logger: Logger): Promise<OptimizerResult | { laterMs: number }> => {
    let outcome: Outcome;
    let seconds: number | undefined;
    try {
      ({ outcome, seconds } = await scheduler.solve(request.tenant_id, request, () => options.facts(request.tenant_id, requestIsins(request))));
    } catch (error) {
      if (error instanceof TenantQueueFull) return { laterMs: error.retryInMs };
      if (error instanceof OptimizerClosed) return { laterMs: 0 };
      if (!(error instanceof EngineFailed)) throw error; // the facts could not be read: offered again after a back-off
      logger.error('optimizer failed', { tenant: request.tenant_id, request: request.request_id, error: error.message });
      outcome = ENGINE_FAILED;
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
      ...(seconds === undefined ? {} : { solve_ms: Math.round(seconds * 1000) }),
    });
    if (seconds !== undefined) options.solved?.(result.status, seconds);
    return result;
  };

  const worker = await startJetStreamWorker({
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
      const solve = async (log: Logger): Promise<WorkOutcome> => {
        const result = await answer(request, log);
        if ('laterMs' in result) return result;
        const published = { msgID: `${result.request_id}:result`, headers: traceHeaders(activeTraceparent()) };
        await js.publish(subjects.optimizerResults, JSON.stringify(result), published);
      };
      const traceparent = headers?.get('traceparent');
      return options.tracing ? options.tracing.inSpan('optimizer request', traceparent, logger, solve) : solve(logger);
    },
  });
  return {
    stop: async () => {
      // The worker stops taking messages first; closing the scheduler then hands back the
      // requests it holds, which lets the worker's handlers end.
      const stopping = worker.stop();
      await scheduler.close();
      await stopping;
    },
  };
}
