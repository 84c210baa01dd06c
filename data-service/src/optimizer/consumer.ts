import { setTimeout as sleep } from 'node:timers/promises';
import {
  activeTraceparent,
  durableConsumer,
  ensureStreams,
  jetstream,
  jetstreamManager,
  messageWork,
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
import { EngineFailed, OptimizerClosed, type OptimizerScheduler } from './solving.ts';

export type OptimizerConsumerOptions = {
  nats: NatsConnection;
  /** Where requests are solved: worker threads taken fairly by tenant. The consumer closes it when it stops. */
  scheduler: OptimizerScheduler;
  /** The store's facts of the given ISINs for the tenant (see instruments.ts). */
  facts: FactsReader;
  logger: Logger;
  /**
   * Requests of one tenant this replica holds at once: solving, waiting for a thread with their
   * facts read, or publishing. More are read when half of them are answered.
   */
  perTenant: number;
  /** How long a request may stay unacknowledged (a replica that died holding it) before another gets it. */
  ackWaitMs?: number;
  /** How often the stream is looked at for tenants whose requests this replica does not read yet (default 1 s). */
  discoverEveryMs?: number;
  now?: () => Date;
  /** Continues the trace of a request's `traceparent` header into its log lines and its result's header. */
  tracing?: Tracing;
  /** Each solve's time on its thread by the outcome's status (docs/adr/0024-observability.md). */
  solved?: (status: string, seconds: number) => void;
};

const ENGINE_FAILED: Outcome = { status: 'FAILURE', is_recommended: false, orders: {}, detail: 'the optimizer failed on this request' };

/** The durable consumer of a tenant's requests, shared by every replica. */
export const tenantDurable = (tenant: string) => `optimizer-${tenant}`;

/** How long one pull for a tenant's requests waits for them before it is made again. */
const PULL_EXPIRES_MS = 10_000;

/**
 * The optimizer's side of platform.optimizer.requests.<tenant> (docs/adr/0020-optimizer-model.md):
 * one durable JetStream consumer per tenant, shared by every replica, so that no tenant's backlog
 * stands in front of another's. The replica looks at the stream every `discoverEveryMs` for
 * tenants with requests and reads each one's requests, holding at most `perTenant` of them; the
 * scheduler gives the threads to the tenants in turn. A request is acknowledged only after its
 * result was stored by the stream (`Nats-Msg-Id` = `<request_id>:result`, so a request solved
 * twice after a crash publishes one result); a replica that dies before that leaves it to be
 * redelivered. A message that is not a request of the contract, or that names another tenant
 * than its subject, is dropped, never retried. A request still waiting or solving when the
 * consumer stops is handed back at once (not acknowledged), for another replica or the next start.
 */
export async function startOptimizerConsumer(options: OptimizerConsumerOptions): Promise<{ stop: () => Promise<void> }> {
  const { nats, logger, scheduler } = options;
  const now = options.now ?? (() => new Date());
  const ackWaitMs = options.ackWaitMs ?? 30_000;
  const js = jetstream(nats);
  await ensureStreams(nats);
  const jsm = await jetstreamManager(nats);

  /** The result, or when to offer the request again (the service stops). */
  const answer = async (request: OptimizerRequest, logger: Logger): Promise<OptimizerResult | { laterMs: number }> => {
    let outcome: Outcome;
    let seconds: number | undefined;
    try {
      ({ outcome, seconds } = await scheduler.solve(request.tenant_id, request, () => options.facts(request.tenant_id, request)));
    } catch (error) {
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

  const work = (tenant: string) =>
    messageWork({
      logger,
      what: 'optimizer request',
      schema: 'OptimizerRequest',
      ackWaitMs,
      handle: async (request, headers): Promise<WorkOutcome> => {
        if (request.tenant_id !== tenant) return { drop: `its tenant_id is not ${tenant}, the tenant of its subject` };
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

  /**
   * Reads one tenant's requests: pulls as many as it may hold, and pulls again once half of
   * them are answered, so the tenant's next requests are read while its last ones solve.
   */
  const readTenant = (tenant: string) => {
    const handle = work(tenant);
    const held = new Set<Promise<void>>();
    let wake: (() => void) | undefined;
    let pull: { stop: () => void } | undefined;
    let reading = true;
    let consumer: Awaited<ReturnType<typeof durableConsumer>> | undefined;
    const loop = (async () => {
      while (reading) {
        if (held.size > options.perTenant / 2) {
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        try {
          consumer ??= await durableConsumer(nats, {
            stream: streams.platform.name,
            subject: subjects.optimizerRequests(tenant),
            durable: tenantDurable(tenant),
            ackWaitMs,
          });
          const messages = await consumer.fetch({ max_messages: options.perTenant - held.size, expires: PULL_EXPIRES_MS });
          pull = messages;
          for await (const message of messages) {
            if (!reading) {
              message.nak();
              continue;
            }
            const job = handle(message).finally(() => {
              held.delete(job);
              wake?.();
            });
            held.add(job);
          }
        } catch (error) {
          if (!reading) break;
          consumer = undefined; // made again, should it have been removed
          logger.warn("a tenant's optimizer requests could not be read; trying again in 1 s", { tenant, error: (error as Error).message });
          await sleep(1000);
        }
      }
      await Promise.all(held);
    })();
    return {
      /** Reads no more; resolves once every request it holds was answered or handed back. */
      halt: () => {
        reading = false;
        pull?.stop();
        wake?.();
        return loop;
      },
    };
  };

  const readers = new Map<string, ReturnType<typeof readTenant>>();
  const prefix = subjects.optimizerRequests('');
  let discovering = true;
  let failing = false;
  /** Starts reading every tenant with requests in the stream that this replica does not read yet. */
  const discover = async () => {
    try {
      const info = await jsm.streams.info(streams.platform.name, { subjects_filter: subjects.everyOptimizerRequest });
      for (const subject of Object.keys(info.state.subjects ?? {})) {
        const tenant = subject.slice(prefix.length);
        if (discovering && !readers.has(tenant)) readers.set(tenant, readTenant(tenant));
      }
      failing = false;
    } catch (error) {
      if (!failing) logger.warn('the optimizer could not look for tenants with requests', { error: (error as Error).message });
      failing = true;
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    await discover();
    if (discovering) timer = setTimeout(() => void tick(), options.discoverEveryMs ?? 1000);
  };
  await tick();

  return {
    stop: async () => {
      // No more reading first; closing the scheduler then hands back the requests it holds,
      // which lets the readers' handlers end.
      discovering = false;
      clearTimeout(timer);
      const halted = [...readers.values()].map((r) => r.halt());
      await scheduler.close();
      await Promise.all(halted);
    },
  };
}
