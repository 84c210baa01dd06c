import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { loadConfig, parseOrigins, parsers, serviceSettings } from '@platform/shared';

/** Cores this process may run on: the default number of simulation threads. */
const CORES = availableParallelism();

/**
 * A number of worker threads (SIMULATION_THREADS, OPTIMIZER_THREADS): 1 to twice the cores. Threads
 * beyond the cores add no speed (they take turns on the same cores); the bound catches a slip such
 * as 40 for 4. The message says how to fix it: what the threads run, and the default.
 */
function threadCount(cores: number, work: string, fallback: number) {
  const max = 2 * cores;
  return (raw: string) => {
    const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!(n >= 1 && n <= max)) {
      throw new Error(
        `"${raw}" is not a whole number from 1 to ${max} (twice the ${cores} cores available); set the threads this replica's ${work} may keep busy, or leave it unset for ${fallback}`,
      );
    }
    return n;
  };
}

/**
 * Default optimizer threads: a core per thread but one, which the event loop keeps for requests
 * (at least 1). Simulations default to every core: the two pools share the cores, each bounded.
 */
const OPTIMIZER_THREADS = Math.max(1, CORES - 1);

/** Every setting of the data service, read once at start (docs/configuration.md's table, checked by test/configuration-doc.test.ts). */
const service = serviceSettings({ metricsPort: 9465 });

export const dataSettings = {
  HOST: { description: 'address to listen on', default: '0.0.0.0', parse: parsers.string },
  PORT: { description: 'HTTP port', default: 8081, parse: parsers.integer(0, 65535) },
  DUCKDB_PATH: { description: 'DuckDB database file of this replica (tenant data), e.g. .data/data.duckdb', required: true, parse: parsers.string },
  REFERENCE_DIR: {
    description:
      'directory of reference files (reference-<version>.duckdb, written by `npm run cli -- data ingest`); the newest is attached; default: `reference/` beside DUCKDB_PATH',
    parse: parsers.string,
  },
  REFERENCE_RELOAD_MS: {
    description: 'how often to look for a newer reference file (0: only at start)',
    default: 10_000,
    parse: parsers.integer(0, 86_400_000),
  },
  SAMPLE_DATA: {
    description: 'when REFERENCE_DIR holds no reference file, generate the labelled sample universe into it (otherwise start with an empty one)',
    default: false,
    parse: parsers.boolean,
  },
  SAMPLE_INSTRUMENTS: { description: 'instruments of the generated sample universe', default: 5_000, parse: parsers.integer(10, 1_000_000) },
  SAMPLE_YEARS: { description: 'years of daily prices of the generated sample universe', default: 10, parse: parsers.integer(1, 30) },
  FX_MAX_AGE_DAYS: {
    description:
      'oldest exchange rate, in days before the date it is used for, that converts an amount (5: a long weekend and a holiday); an older one is an error, never a rate of 1',
    default: 5,
    parse: parsers.integer(0, 366),
  },
  DATABASE_URL: {
    description: 'Postgres URL of the management database: reads tenants and API keys, reads and writes its data_* tables (tenant data)',
    required: true,
    secret: true,
    parse: parsers.url('postgres', 'postgresql'),
  },
  IDEMPOTENCY_RETENTION_DAYS: {
    description: "days a custom-data write's answer is kept for replay under its Idempotency-Key (the management service's job removes expired keys)",
    default: 7,
    parse: parsers.integer(1, 365),
  },
  IDEMPOTENCY_WAIT_MS: {
    description: 'how long a write waits for a running one with the same Idempotency-Key before answering 409',
    default: 5_000,
    parse: parsers.integer(0, 60_000),
  },
  DATABASE_POOL_MAX: {
    description: "largest number of Postgres connections (every request reads its tenant's data version)",
    default: 10,
    parse: parsers.integer(1, 500),
  },
  DATABASE_CONNECT_TIMEOUT_MS: {
    description:
      'longest wait for a Postgres connection (a new one, or a free one of the pool); beyond it Postgres counts as not answering: reads are served degraded, writes get 503 (0: wait for ever)',
    default: 5_000,
    parse: parsers.integer(0, 600_000),
  },
  NATS_URL: {
    description: "NATS server with JetStream, e.g. nats://127.0.0.1:4222, or a cluster's servers comma-separated (nats://10.0.0.1:4222,10.0.0.2:4222)",
    required: true,
    parse: parsers.natsServers,
  },
  // The service's own user on the bus (docs/adr/0026-bus-authorization.md); credentials in NATS_URL work too.
  NATS_USER: { description: 'user name on the NATS server (e.g. data-service); none: the one in NATS_URL, if any', parse: parsers.string },
  NATS_PASSWORD: { description: 'password of NATS_USER', secret: true, parse: parsers.string },
  NATS_STREAM_REPLICAS: service.NATS_STREAM_REPLICAS,
  API_KEY_CACHE_MS: {
    description: 'how long the tenant and id an API key names are cached (revocation is checked every TOKEN_REVOCATION_CHECK_MS regardless)',
    default: 30_000,
    parse: parsers.integer(0, 3_600_000),
  },
  TOKEN_REVOCATION_CHECK_MS: {
    description:
      "how often each replica reads a tenant's revoked API keys and state: a revoked key or a disabled tenant is refused within this bound (0: read on every request)",
    default: 5_000,
    parse: parsers.integer(0, 60_000),
  },
  RATE_LIMIT_WINDOW_SECONDS: {
    description: 'length of the window of the API-key limit (docs/adr/0023-rate-limits.md)',
    default: 60,
    parse: parsers.integer(1, 3600),
  },
  RATE_LIMIT_API_KEY: {
    description: "requests per window of one API key; a tenant's own value (`cli tenant set-limits --requests-per-minute`) wins; 0: no limit",
    default: 1200,
    parse: parsers.integer(0, 10_000_000),
  },
  DEGRADED_MAX_MS: {
    description:
      'while Postgres does not answer, how long this replica keeps serving reads from its cached tenant data and API-key checks (degraded; writes are refused) before it refuses reads too with 503 (0: never degrade)',
    default: 300_000,
    parse: parsers.integer(0, 86_400_000),
  },
  BODY_LIMIT_BYTES: {
    description: 'largest accepted request body (reference queries of 100,000 ISINs are about 1.6 MB)',
    default: 8 * 1_048_576,
    parse: parsers.integer(1024, 1024 * 1_048_576),
  },
  SIMULATION_MAX_CELLS: {
    description:
      'largest scenarios × steps × asset classes of one future performance simulation (10,000 scenarios × 30 years of daily steps × 2 classes is 219 million; about 25 ns each here)',
    default: 250_000_000,
    parse: parsers.integer(1, 10_000_000_000),
  },
  OPTIMIZER: {
    description:
      "answer optimizer requests (platform.optimizer.requests.<tenant>) with the portfolio optimizer; every replica that does shares each tenant's durable consumer, so each request is solved once",
    default: true,
    parse: parsers.boolean,
  },
  OPTIMIZER_TIME_LIMIT_MS: {
    description:
      'longest search of one whole-share optimization; the best answer found by then is used (checked like any other), none is a FAILURE. A solve holds the replica meanwhile',
    default: 500,
    parse: parsers.integer(10, 60_000),
  },
  OPTIMIZER_ACK_WAIT_MS: {
    description:
      "how long an optimizer request may stay unanswered by the replica that took it (one that died while solving) before another replica gets it (applies when a tenant's durable consumer is first created); a request waiting for a thread is marked in progress every half of it",
    default: 30_000,
    parse: parsers.integer(100, 3_600_000),
  },
  OPTIMIZER_THREADS: {
    description: `worker threads that solve optimizer requests, one request each at a time (default: the cores available but one, at least 1: ${OPTIMIZER_THREADS} here); they share the cores with SIMULATION_THREADS`,
    default: OPTIMIZER_THREADS,
    parse: threadCount(CORES, 'optimizations', OPTIMIZER_THREADS),
  },
  OPTIMIZER_THREAD_NICE: {
    description:
      "nice value of the optimizer threads (Linux, where a nice value is per thread): 0 to 19, higher yields the CPU sooner to the replica's requests and to the other processes of the node; 0 leaves them at the event loop's priority (docs/adr/0020-optimizer-model.md)",
    default: 10,
    parse: parsers.integer(0, 19),
  },
  OPTIMIZER_QUEUE_PER_TENANT: {
    description:
      "optimizer requests of one tenant this replica holds at once, solving or waiting for a thread with their instruments' facts read; it reads more of them when half are answered. Each tenant's requests are read through a consumer of their own, and the threads take the tenants' waiting requests in turn",
    default: 16,
    parse: parsers.integer(1, 1_000),
  },
  SIMULATION_THREADS: {
    description: `worker threads that run future performance simulations: a lone run keeps all of them busy, the tenants with runs in progress share them unit by unit (default: the cores available, ${CORES} here)`,
    default: CORES,
    parse: threadCount(CORES, 'simulations', CORES),
  },
  SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS: {
    description:
      "half-life of a simulation unit in its tenant's recent usage of the threads: a free thread takes the next unit of the tenant with the least, so a tenant arriving beside another's burst gets the threads until its usage catches up, and holds the bursting tenant back for at most about this long (docs/adr/0030-monte-carlo-threads.md)",
    default: 30,
    parse: parsers.integer(1, 3600),
  },
  SIMULATION_QUEUE_PER_TENANT: {
    description:
      "future performance simulations one tenant may have waiting for a worker thread (beyond them: 429 rate_limited); the threads take the tenants' waiting runs in turn",
    default: 4,
    parse: parsers.integer(1, 10_000),
  },
  TRUSTED_PROXIES: service.TRUSTED_PROXIES,
  CORS_ALLOWED_ORIGINS: {
    description:
      'origins of browser pages that may call this interface, comma-separated (e.g. the administration console: http://127.0.0.1:8080); others get no CORS header (docs/adr/0037-console-and-the-data-service.md); default none',
    default: [] as string[],
    parse: parseOrigins,
  },
  OVERLOAD_SHEDDING: service.OVERLOAD_SHEDDING,
  OVERLOAD_EVENT_LOOP_DELAY_MS: service.OVERLOAD_EVENT_LOOP_DELAY_MS,
  OVERLOAD_MIN_LIMIT: service.OVERLOAD_MIN_LIMIT,
  SHUTDOWN_GRACE_MS: service.SHUTDOWN_GRACE_MS,
  METRICS_HOST: service.METRICS_HOST,
  METRICS_PORT: service.METRICS_PORT,
  OTEL_EXPORTER_OTLP_ENDPOINT: service.OTEL_EXPORTER_OTLP_ENDPOINT,
  LOG_LEVEL: service.LOG_LEVEL,
} as const;

export type DataConfig = ReturnType<typeof loadDataConfig>;

export function loadDataConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(dataSettings, env);
  return Object.freeze({ ...config, REFERENCE_DIR: config.REFERENCE_DIR ?? join(dirname(config.DUCKDB_PATH), 'reference') });
}
