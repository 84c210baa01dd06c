import {
  Resources,
  buildInfo,
  cachedPerKey,
  connectNats,
  createMetricsRegistry,
  createRevocationCache,
  createTracing,
  ensureStreams,
  listen,
  postgresRateLimitStore,
  serveMetrics,
  startAdmission,
  type Logger,
  type SpanExporter,
} from '@platform/shared';
import { createBearerAuthenticator } from './auth/authenticate.ts';
import { createLoginThrottle } from './auth/login-throttle.ts';
import { createTokenSigner } from './auth/tokens.ts';
import type { ManagementConfig } from './config.ts';
import { simulatedBroker } from './broker/simulated.ts';
import { startForwarders } from './events/forwarder.ts';
import { logNatsStatus } from './events/nats-status.ts';
import { startOptimizerResults } from './events/optimizer-results.ts';
import { startRelay } from './events/relay.ts';
import { createManagementApp } from './http/app.ts';
import { startBrokerSettlement } from './jobs/broker-settlement.ts';
import { startOptimizerNightly } from './jobs/optimizer-nightly.ts';
import { startRetention } from './jobs/retention.ts';
import { startAssessmentExpiry } from './jobs/assessment-expiry.ts';
import { startOptimizerTimeouts } from './jobs/optimizer-timeouts.ts';
import { managementMetrics } from './metrics.ts';
import { createDb } from './store/db.ts';
import { poolWait } from './store/pool-wait.ts';
import { migrateLatest } from './store/migrate.ts';
import { readTenantRevocations } from './store/token-revocations.ts';
import { readTenantRateLimits } from './store/rate-limits.ts';

export type RunningService = { url: string; metricsUrl: string; stop: () => Promise<void> };
/** Tests export the spans to memory (docs/adr/0024-observability.md). */
export type ManagementServiceOptions = { spanExporter?: SpanExporter };

/** Connects Postgres and NATS, migrates, and serves the management interface until stop(). */
export async function startManagementService(config: ManagementConfig, logger: Logger, options: ManagementServiceOptions = {}): Promise<RunningService> {
  const resources = new Resources();
  return resources.build(async () => {
    const db = resources.add(createDb(config.DATABASE_URL, config.DATABASE_POOL_MAX, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS }), (d) =>
      d.destroy(),
    );
    if (config.MIGRATE_ON_START) {
      const applied = await migrateLatest(db);
      if (applied.length > 0) logger.info('migrations applied', { applied });
    }
    const nats = resources.add(await connectNats(config.NATS_URL, 'management-service', { user: config.NATS_USER, pass: config.NATS_PASSWORD }), (n) =>
      n.drain(),
    );
    logNatsStatus(nats, logger);
    // docs/adr/0024-observability.md: this service's own registry and spans.
    const registry = createMetricsRegistry('management-service');
    const metrics = managementMetrics(registry, db, logger);
    const tracing = resources.add(
      createTracing({ service: 'management-service', otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, exporter: options.spanExporter }),
      (t) => t.shutdown(),
    );
    await ensureStreams(nats, { replicas: config.NATS_STREAM_REPLICAS, logger });
    const signer = await createTokenSigner(config.JWT_PRIVATE_KEY, config.JWT_ISSUER, config.ACCESS_TOKEN_TTL_SECONDS);
    const authenticate = createBearerAuthenticator({
      signer,
      oidc: config.OIDC_ISSUER
        ? { issuer: config.OIDC_ISSUER, audience: config.OIDC_AUDIENCE!, jwksUrl: config.OIDC_JWKS_URL!, tenantClaim: config.OIDC_TENANT_CLAIM }
        : undefined,
      revocations: createRevocationCache({ read: (tenantId) => readTenantRevocations(db, tenantId), checkMs: config.TOKEN_REVOCATION_CHECK_MS }),
    });
    const rateLimitStore = postgresRateLimitStore(db, 'knex');
    // docs/adr/0062-overload-shedding.md: the limit follows the event loop's delay and the wait for a connection of the pool.
    const admission = config.OVERLOAD_SHEDDING ? resources.add(startOverloadShedding(config, db, registry), (a) => a.stop()) : undefined;
    const app = await createManagementApp({
      build: buildInfo(process.env, process.version),
      db,
      nats,
      signer,
      authenticate,
      historyTimeoutMs: config.HISTORY_TIMEOUT_MS,
      rateLimits: {
        store: rateLimitStore,
        settings: {
          windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
          accessKey: config.RATE_LIMIT_ACCESS_KEY,
          user: config.RATE_LIMIT_USER,
          address: config.RATE_LIMIT_ADDRESS,
        },
        // A tenant's own limits reach every replica within the bound of its revocations; while
        // Postgres is away the defaults apply (the request then gets its own 503, not one of the limits).
        tenantLimits: cachedPerKey((tenantId) => readTenantRateLimits(db, tenantId).catch(() => ({})), config.TOKEN_REVOCATION_CHECK_MS),
      },
      loginThrottle: createLoginThrottle(rateLimitStore, {
        pairFailuresFree: config.LOGIN_FAILURES_FREE,
        addressFailuresFree: config.LOGIN_ADDRESS_FAILURES_FREE,
        blockSeconds: config.LOGIN_BLOCK_SECONDS,
        maxBlockSeconds: config.LOGIN_BLOCK_MAX_SECONDS,
        failureWindowSeconds: config.LOGIN_FAILURE_WINDOW_SECONDS,
      }),
      logger,
      bodyLimitBytes: config.BODY_LIMIT_BYTES,
      trustedProxies: config.TRUSTED_PROXIES,
      console: { dir: config.CONSOLE_DIR, dataServiceUrl: config.CONSOLE_DATA_SERVICE_URL },
      observability: { tracing, metrics: metrics.http },
      admission,
      refreshTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
      idempotency: { retentionDays: config.IDEMPOTENCY_RETENTION_DAYS, waitMs: config.IDEMPOTENCY_WAIT_MS },
    });
    if (config.OUTBOX_RELAY) {
      resources.add(
        await startRelay({
          db,
          databaseUrl: config.DATABASE_URL,
          nats,
          logger,
          partitions: config.RELAY_PARTITIONS,
        }),
        (r) => r.stop(),
      );
    }
    if (config.EVENT_FORWARDERS) resources.add(await startForwarders({ db, nats, logger, metrics: metrics.forwarding }), (f) => f.stop());
    if (config.BROKER_SETTLEMENT) {
      // No real broker adapter is built in: the simulated broker serves SERVICE tenants and, always, PAPER_MONEY portfolios.
      const broker = simulatedBroker({
        latencyMs: config.BROKER_SIMULATED_LATENCY_MS,
        refuseRate: config.BROKER_SIMULATED_REFUSE_RATE,
        failureRate: config.BROKER_SIMULATED_FAILURE_RATE,
      });
      resources.add(await startBrokerSettlement({ db, databaseUrl: config.DATABASE_URL, broker, paperBroker: broker, logger }), (s) => s.stop());
    }
    if (config.OPTIMIZER_RESULTS) {
      const results = { db, nats, logger, ackWaitMs: config.OPTIMIZER_ACK_WAIT_MS, tracing, metrics: metrics.optimizerResults };
      resources.add(await startOptimizerResults(results), (r) => r.stop());
    }
    const limits = { timeoutMs: config.OPTIMIZER_RESULT_TIMEOUT_MS, maxAttempts: config.OPTIMIZER_MAX_ATTEMPTS };
    resources.add(startOptimizerTimeouts({ db, logger, ...limits }), (t) => t.stop());
    if (config.OPTIMIZER_NIGHTLY_AT !== '') resources.add(startOptimizerNightly({ db, logger, at: config.OPTIMIZER_NIGHTLY_AT }), (n) => n.stop());
    if (config.RETENTION_AT !== '') {
      const retention = { db, logger, at: config.RETENTION_AT, batch: config.RETENTION_BATCH_ROWS, metrics: metrics.retention };
      resources.add(
        startRetention({ ...retention, settings: { outboxDays: config.OUTBOX_RETENTION_DAYS, erasedUserYears: config.RETENTION_ERASED_USER_YEARS } }),
        (r) => r.stop(),
      );
    }
    resources.add(startAssessmentExpiry({ db, logger }), (e) => e.stop());
    const http = resources.add(await listen(app, config.HOST, config.PORT, config.SHUTDOWN_GRACE_MS, logger), (h) => h.close());
    const metricsServer = resources.add(await serveMetrics(registry, config.METRICS_HOST, config.METRICS_PORT, logger), (m) => m.close());
    logger.info('management service listening', { url: http.url, metrics: `${metricsServer.url}/metrics` });
    return {
      url: http.url,
      metricsUrl: metricsServer.url,
      stop: async () => {
        await resources.closeAll();
        logger.info('management service stopped');
      },
    };
  });
}

function startOverloadShedding(config: ManagementConfig, db: ReturnType<typeof createDb>, registry: ReturnType<typeof createMetricsRegistry>) {
  const wait = poolWait(db);
  const admission = startAdmission({
    eventLoopDelayTargetMs: config.OVERLOAD_EVENT_LOOP_DELAY_MS,
    dbWaitTargetMs: config.OVERLOAD_DB_WAIT_MS,
    dbWaitMs: wait.sample,
    registry,
    limits: { minLimit: config.OVERLOAD_MIN_LIMIT },
  });
  return {
    ...admission,
    stop: () => {
      admission.stop();
      wait.stop();
    },
  };
}
