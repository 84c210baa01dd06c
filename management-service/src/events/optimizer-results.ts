import type { Knex } from 'knex';
import { startJetStreamWorker, streams, subjects, type Logger, type NatsConnection, type Tracing } from '@platform/shared';
import type { ResultOutcome } from '../flows/optimization/attempts.ts';
import { storeResult, type OptimizerResult } from '../flows/optimization/result.ts';
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
  /** Continues the trace of the result's `traceparent` header: its log lines and the events stored with it carry it. */
  tracing?: Tracing;
  metrics?: ResultMetrics;
};

/** Results counted by their status and outcome (docs/adr/0024-observability.md). */
export type ResultMetrics = { handled: (status: string, outcome: ResultOutcome) => void };

/**
 * The management service's side of platform.optimizer.results (docs/adr/0021-optimizations.md): a durable JetStream
 * consumer shared by every replica. A result is acknowledged only after the transaction that stores it committed, so a
 * replica that dies before leaves it to be redelivered, and storing is idempotent per request (a result delivered twice
 * is stored once). A message that is not a result of the contract, or whose Nats-Msg-Id is not `<request_id>:result`,
 * is dropped; one that fails for another reason (the database away) is offered again.
 */
export function startOptimizerResults(options: OptimizerResultsOptions): Promise<{ stop: () => Promise<void> }> {
  const { db, logger } = options;
  const now = options.now ?? (() => new Date());
  return startJetStreamWorker({
    nats: options.nats,
    logger,
    what: 'optimizer result',
    stream: streams.platform.name,
    subject: subjects.optimizerResults,
    durable: options.durable ?? 'management-optimizer-results',
    schema: 'OptimizerResult',
    ackWaitMs: options.ackWaitMs ?? 30_000,
    concurrency: options.concurrency ?? 8,
    handle: async (message, headers) => {
      const result = message as OptimizerResult;
      const messageId = headers?.get('Nats-Msg-Id') ?? '';
      if (messageId !== `${result.request_id}:result`) return { drop: `Nats-Msg-Id "${messageId}" is not "${result.request_id}:result"` };
      const context = { tenant: result.tenant_id, request: result.request_id, optimization: result.optimization_id, status: result.status };
      const store = async (log: Logger) => {
        const outcome = await inTenant(db, result.tenant_id, (trx, tenant) => storeResult(trx, tenant, result, now().toISOString()));
        options.metrics?.handled(result.status, outcome);
        if (outcome === 'STORED') log.info('optimization result stored', context);
        else log.info('optimization result not stored', { ...context, outcome });
      };
      const traceparent = headers?.get('traceparent');
      await (options.tracing ? options.tracing.inSpan('optimizer result', traceparent, logger, store) : store(logger));
    },
  });
}
