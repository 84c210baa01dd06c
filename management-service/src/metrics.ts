import type { Knex } from 'knex';
import { Counter, Gauge, httpMetrics, sharedRead, type HttpMetrics, type Logger, type Registry } from '@platform/shared';
import type { ForwardingMetrics } from './events/forwarder.ts';
import type { ResultMetrics } from './events/optimizer-results.ts';
import type { RetentionMetrics } from './jobs/retention.ts';
import { readBacklog } from './store/backlog.ts';

export type ManagementMetrics = { http: HttpMetrics; forwarding: ForwardingMetrics; optimizerResults: ResultMetrics; retention: RetentionMetrics };

/**
 * The management service's metrics in its own registry (docs/adr/0024-observability.md). Counters
 * are counted where things happen; the gauges of waiting work and of the Postgres pool are read
 * when scraped, so nothing polls between scrapes.
 */
export function managementMetrics(registry: Registry, db: Knex, logger: Logger): ManagementMetrics {
  const pool = (db.client as { pool?: { numUsed: () => number; numFree: () => number; numPendingAcquires: () => number } }).pool;
  new Gauge({
    name: 'db_pool_connections',
    help: 'Postgres connections of this replica: total open, idle, and callers waiting for one',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      if (!pool) return;
      this.set({ state: 'total' }, pool.numUsed() + pool.numFree());
      this.set({ state: 'idle' }, pool.numFree());
      this.set({ state: 'waiting' }, pool.numPendingAcquires());
    },
  });

  const backlog = sharedRead(() => readBacklog(db), logger, 'the outbox and job backlog');
  const backlogGauge = (name: string, help: string, pick: (b: Awaited<ReturnType<typeof readBacklog>>) => number | undefined) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        // A failed read keeps the last value: a scrape while Postgres is away shows no false zero.
        const value = await backlog();
        if (value) this.set(pick(value) ?? 0);
      },
    });
  backlogGauge('outbox_unpublished_events', 'Outbox rows (events and internal messages) not yet published to NATS', (b) => b.outboxUnpublished);
  backlogGauge('outbox_lag_seconds', 'Age of the oldest unpublished outbox row (0 when every row is published)', (b) => b.outboxOldestSeconds);
  backlogGauge(
    'optimizer_requests_pending',
    'Optimizer requests sent and neither answered nor timed out (PENDING optimizations)',
    (b) => b.optimizerRequestsPending,
  );
  backlogGauge('broker_instructions_pending', 'Broker instructions (deposits, orders, withdrawals) not settled yet', (b) => b.brokerInstructionsPending);
  backlogGauge(
    'optimizer_nightly_last_run_timestamp_seconds',
    'When the last nightly optimization batch finished, in seconds since the epoch (0 before the first)',
    (b) => b.nightlyFinishedAt,
  );
  backlogGauge('optimizer_nightly_last_run_requested', 'Optimizations the last nightly batch requested (0 before the first)', (b) => b.nightlyRequested);
  backlogGauge(
    'retention_last_run_timestamp_seconds',
    'When the last retention run (any replica) finished, in seconds since the epoch (0 before the first)',
    (b) => b.retentionFinishedAt,
  );

  const delivered = new Counter({
    name: 'events_delivered_total',
    help: "Tenant events delivered to tenants' own brokers, by destination kind",
    labelNames: ['destination_kind'],
    registers: [registry],
  });
  const failed = new Counter({
    name: 'events_delivery_failures_total',
    help: "Failed deliveries of tenant events to tenants' own brokers (each retried), by destination kind",
    labelNames: ['destination_kind'],
    registers: [registry],
  });
  const results = new Counter({
    name: 'optimizer_results_total',
    help: 'Optimizer results handled, by their status and what became of them (STORED, LATE, …)',
    labelNames: ['status', 'outcome'],
    registers: [registry],
  });

  const retained = new Counter({
    name: 'retention_deleted_rows_total',
    help: 'Rows the retention runs of this replica removed, by rule (docs/adr/0061-retention.md)',
    labelNames: ['rule'],
    registers: [registry],
  });

  return {
    http: httpMetrics(registry),
    retention: { deleted: (rule, rows) => retained.inc({ rule }, rows) },
    forwarding: { delivered: (kind) => delivered.inc({ destination_kind: kind }), failed: (kind) => failed.inc({ destination_kind: kind }) },
    optimizerResults: { handled: (status, outcome) => results.inc({ status, outcome }) },
  };
}
