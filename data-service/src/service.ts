import pg from 'pg';
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
import { createApiKeyVerifier, readApiKeyRevocations, revocationsThroughOutage } from './auth/api-keys.ts';
import { readTenantRateLimits } from './auth/rate-limits.ts';
import { Outage, type OutageChange } from './domain/outage.ts';
import type { DataConfig } from './config.ts';
import { createDataApp } from './http/app.ts';
import { dataMetrics } from './metrics.ts';
import { openDuckStore } from './store/duckdb.ts';
import { simulationPool } from './workers/simulation-pool.ts';
import { simulationScheduler, type SimulationStats } from './workers/simulation-scheduler.ts';
import { optimizerPool, type OptimizerExecutor } from './workers/optimizer-pool.ts';
import { optimizerScheduler } from './workers/optimizer-scheduler.ts';
import { ensureReferenceData } from './sample/ensure-reference.ts';
import { startOptimizerConsumer } from './optimizer/consumer.ts';
import { startHistoryResponder } from './history/responder.ts';
import { instrumentFacts } from './optimizer/instruments.ts';
import { referenceRates } from './optimizer/reference-rates.ts';
import { fxRates } from './fx/store.ts';
import { TenantCache } from './tenant-data/cache.ts';
import { postgresReadiness } from './tenant-data/readiness.ts';

export type RunningService = { url: string; stop: () => Promise<void> };
/** The data service, and how many simulations run and wait in it (tests and diagnostics). */
export type DataService = RunningService & { simulations: () => SimulationStats; metricsUrl: string };
export type DataServiceOptions = {
  /** Tests export the spans to memory (docs/adr/0024-observability.md). */
  spanExporter?: SpanExporter;
  /** Solves optimizer requests instead of OPTIMIZER_THREADS worker threads (the benchmark's baseline on the event loop). */
  optimizerExecutor?: OptimizerExecutor;
};

/** Opens the DuckDB file, connects NATS and Postgres (API keys, tenant data), and serves the data interface until stop(). */
export async function startDataService(config: DataConfig, logger: Logger, options: DataServiceOptions = {}): Promise<DataService> {
  const resources = new Resources();
  return resources.build(async () => {
    await ensureReferenceData(config, logger);
    const duck = resources.add(await openDuckStore({ path: config.DUCKDB_PATH, referenceDir: config.REFERENCE_DIR }), (d) => d.close());
    // One rates reader for every feature, so that the rates one reads are cached for the others.
    const fx = fxRates(duck);
    if (config.REFERENCE_RELOAD_MS > 0) {
      const timer = setInterval(() => {
        duck
          .reload()
          .then((switched) => switched && logger.info('reference data reloaded', { dir: config.REFERENCE_DIR }))
          .catch((error: Error) => logger.warn('reference data reload failed; keeping the current data', { error: error.message }));
      }, config.REFERENCE_RELOAD_MS);
      resources.add(timer, (t) => clearInterval(t));
    }
    const pool = resources.add(
      new pg.Pool({ connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_MAX, connectionTimeoutMillis: config.DATABASE_CONNECT_TIMEOUT_MS }),
      (p) => p.end(),
    );
    // An idle connection that Postgres ends (a restart: 57P01) is an 'error' of the pool, which
    // would otherwise stop the process; the pool drops that connection and opens another.
    pool.on('error', (error) => logger.warn('idle Postgres connection lost', { error: error.message }));
    const nats = resources.add(await connectNats(config.NATS_URL, 'data-service', { user: config.NATS_USER, pass: config.NATS_PASSWORD }), (n) => n.drain());
    // The streams' replicas are set here, before the optimizer's consumers, which make sure of the streams only.
    await ensureStreams(nats, { replicas: config.NATS_STREAM_REPLICAS, logger });
    // docs/adr/0024-observability.md: this service's own registry and spans.
    const registry = createMetricsRegistry('data-service');
    const metrics = dataMetrics(registry, pool, duck, logger);
    const tracing = resources.add(
      createTracing({ service: 'data-service', otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, exporter: options.spanExporter }),
      (t) => t.shutdown(),
    );
    // One view of Postgres for the whole replica: tenant data, API keys and /readyz (docs/adr/0025-data-service-degraded.md).
    const outage = new Outage(config.DEGRADED_MAX_MS, Date.now, (change) => logOutage(logger, change, config.DEGRADED_MAX_MS));
    const tenants = new TenantCache(pool, duck, logger, outage);
    if (config.OPTIMIZER) {
      const threads = options.optimizerExecutor
        ? undefined
        : optimizerPool(config.OPTIMIZER_THREADS, { timeLimitSeconds: config.OPTIMIZER_TIME_LIMIT_MS / 1000, nice: config.OPTIMIZER_THREAD_NICE });
      // A thread that cannot load the solver stops the start, as the solver on the event loop did.
      if (threads) await resources.add(threads, (t) => t.close()).ready();
      const executor = options.optimizerExecutor ?? threads!;
      const scheduler = optimizerScheduler(executor);
      metrics.watchOptimizer(scheduler.stats, threads?.busyThreads);
      const consumer = {
        nats,
        scheduler,
        // Other currencies at the reference data's rates; one missing or too old is refused by its pair, never taken at 1.
        facts: instrumentFacts(duck, tenants, referenceRates(fx.read, config.FX_MAX_AGE_DAYS)),
        logger,
        ackWaitMs: config.OPTIMIZER_ACK_WAIT_MS,
        perTenant: config.OPTIMIZER_QUEUE_PER_TENANT,
        tracing,
        solved: metrics.solved,
      };
      // Stopping the consumer closes the scheduler and its threads, handing back what they held.
      resources.add(await startOptimizerConsumer(consumer), (o) => o.stop());
    }
    // Portfolio histories for the management service (docs/adr/0058-portfolio-history.md): every
    // replica answers in one queue group; stopping drains it before NATS closes.
    resources.add(startHistoryResponder({ nats, duck, fx: fx.series, fxMaxAgeDays: config.FX_MAX_AGE_DAYS, logger }), (h) => h.stop());
    const executor = metrics.timedSimulations(
      simulationPool(config.SIMULATION_THREADS, { turns: { halfLifeMs: 1000 * config.SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS } }),
    );
    const simulations = resources.add(simulationScheduler(executor, config.SIMULATION_QUEUE_PER_TENANT), (s) => s.close());
    // docs/adr/0062-overload-shedding.md: the limit follows the event loop's delay (the data service's Postgres is a cache's source, not its hot path).
    const admission = config.OVERLOAD_SHEDDING
      ? resources.add(
          startAdmission({ eventLoopDelayTargetMs: config.OVERLOAD_EVENT_LOOP_DELAY_MS, registry, limits: { minLimit: config.OVERLOAD_MIN_LIMIT } }),
          (a) => a.stop(),
        )
      : undefined;
    const app = await createDataApp({
      admission,
      fx,
      build: buildInfo(process.env, process.version),
      duck,
      tenants,
      idempotency: { retentionDays: config.IDEMPOTENCY_RETENTION_DAYS, waitMs: config.IDEMPOTENCY_WAIT_MS },
      simulation: { limits: { maxCells: config.SIMULATION_MAX_CELLS }, scheduler: simulations, fxMaxAgeDays: config.FX_MAX_AGE_DAYS },
      nats,
      verifier: createApiKeyVerifier(
        pool,
        config.API_KEY_CACHE_MS,
        createRevocationCache({
          read: revocationsThroughOutage((tenantId) => readApiKeyRevocations(pool, tenantId), outage),
          checkMs: config.TOKEN_REVOCATION_CHECK_MS,
        }),
        outage,
      ),
      postgresAnswers: () => postgresReadiness(pool, outage),
      logger,
      bodyLimitBytes: config.BODY_LIMIT_BYTES,
      trustedProxies: config.TRUSTED_PROXIES,
      corsAllowedOrigins: config.CORS_ALLOWED_ORIGINS,
      observability: { tracing, metrics: metrics.http },
      rateLimits: {
        store: postgresRateLimitStore(pool, 'pool'),
        settings: { windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS, apiKey: config.RATE_LIMIT_API_KEY },
        // A tenant's own limits reach every replica within the bound of its revocations; while
        // Postgres is away the defaults apply.
        tenantLimits: cachedPerKey((tenantId) => readTenantRateLimits(pool, tenantId).catch(() => ({})), config.TOKEN_REVOCATION_CHECK_MS),
      },
    });
    const http = resources.add(await listen(app, config.HOST, config.PORT, config.SHUTDOWN_GRACE_MS, logger), (h) => h.close());
    const metricsServer = resources.add(await serveMetrics(registry, config.METRICS_HOST, config.METRICS_PORT, logger), (m) => m.close());
    logger.info('data service listening', { url: http.url, metrics: `${metricsServer.url}/metrics` });
    return {
      url: http.url,
      simulations: simulations.stats,
      metricsUrl: metricsServer.url,
      stop: async () => {
        await resources.closeAll();
        logger.info('data service stopped');
      },
    };
  });
}

function logOutage(logger: Logger, change: OutageChange, maxMs: number): void {
  if (maxMs === 0) {
    // Never degraded: every request that needs Postgres is refused while it does not answer.
    if (change.to === 'degraded') logger.warn('Postgres does not answer: refusing what needs it (DEGRADED_MAX_MS is 0)');
    else if (change.to === 'ok') logger.info('Postgres answers again', { after_ms: change.afterMs });
    return;
  }
  if (change.to === 'degraded') logger.warn('Postgres does not answer: serving reads from cached tenant data and API keys, refusing writes', { max_ms: maxMs });
  else if (change.to === 'expired') logger.error('Postgres still does not answer after DEGRADED_MAX_MS: refusing reads too', { after_ms: change.afterMs });
  else logger.info('Postgres answers again: no longer degraded', { after_ms: change.afterMs });
}
