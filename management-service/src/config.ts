import { createPrivateKey } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, parsers, serviceSettings } from '@platform/shared';

const HOW_TO_FIX = 'create one with `npm run -s cli -- signing-key --out key.pem`';

/**
 * The signing key is checked here, at start, as strictly as the token signer will read it: a key
 * with text around the PEM (npm's banner from `npm run cli -- signing-key > key.pem`) or of another
 * kind would otherwise let the service start and fail at the first login.
 */
function parseSigningKey(raw: string): string {
  // One-line env values carry the line breaks as `\n`.
  const pem = raw.replace(/\\n/g, '\n').replace(/\r\n/g, '\n').trim();
  const notKey = (why: string) => new Error(`is not a PEM PKCS#8 EC P-256 private key (${why}): ${HOW_TO_FIX}`);
  const begin = pem.indexOf('-----BEGIN ');
  if (begin < 0) throw notKey('no -----BEGIN PRIVATE KEY----- line');
  if (begin > 0) throw notKey("text before its -----BEGIN line, such as npm's banner");
  const match = /^-----BEGIN PRIVATE KEY-----\n([A-Za-z0-9+/=\n]+)\n-----END PRIVATE KEY-----$/.exec(pem);
  if (!match) {
    const label = /^-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)?.[1];
    throw notKey(
      label && label !== 'PRIVATE KEY'
        ? `a PEM "${label}", not "PRIVATE KEY"`
        : 'not one PEM block of base64 between -----BEGIN PRIVATE KEY----- and -----END PRIVATE KEY-----',
    );
  }
  let key;
  try {
    key = createPrivateKey({ key: Buffer.from(match[1]!.replace(/\n/g, ''), 'base64'), format: 'der', type: 'pkcs8' });
  } catch {
    throw notKey('its content does not decode as PKCS#8');
  }
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType !== 'ec' || curve !== 'prime256v1') throw notKey(`a ${key.asymmetricKeyType}${curve ? ` ${curve}` : ''} key`);
  return `${pem}\n`;
}

/** A share between 0 and 1 written as a plain decimal (`0`, `0.25`, `1`). */
function rate(raw: string): number {
  if (!/^(0|1|0?\.\d+|1\.0+)$/.test(raw)) throw new Error(`"${raw}" is not a share between 0 and 1 (e.g. 0.25)`);
  return Number(raw);
}

/** A URL the browser fetches from: http or https, no query or fragment; kept without a trailing slash. */
function consoleDataUrl(raw: string): string {
  parsers.url('http', 'https')(raw);
  const url = new URL(raw);
  if (url.search || url.hash) throw new Error(`"${raw}" has a query or fragment: give the data service's base URL, e.g. http://127.0.0.1:8081`);
  return raw.replace(/\/+$/, '');
}

/** A time of day in UTC, `HH:MM` (the nightly optimization batch). */
function timeOfDay(raw: string): string {
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(raw)) throw new Error(`"${raw}" is not a UTC time of day HH:MM (e.g. 02:00)`);
  return raw;
}

/** Every setting of the management service, read once at start (docs/configuration.md's table, checked by test/configuration-doc.test.ts). */
const service = serviceSettings({ metricsPort: 9464 });

export const managementSettings = {
  HOST: { description: 'address to listen on', default: '0.0.0.0', parse: parsers.string },
  PORT: { description: 'HTTP port', default: 8080, parse: parsers.integer(0, 65535) },
  DATABASE_URL: {
    description: 'Postgres connection URL, e.g. postgres://user:pass@host:5432/db',
    required: true,
    secret: true,
    parse: parsers.url('postgres', 'postgresql'),
  },
  DATABASE_POOL_MAX: { description: 'largest number of Postgres connections', default: 10, parse: parsers.integer(1, 500) },
  DATABASE_PREPARED_STATEMENTS: {
    description:
      'prepare each statement once per connection, by name (false behind a pooler that cannot keep them, e.g. PgBouncer before 1.21 in transaction mode)',
    default: true,
    parse: parsers.boolean,
  },
  NATS_URL: {
    description: "NATS server with JetStream, e.g. nats://127.0.0.1:4222, or a cluster's servers comma-separated (nats://10.0.0.1:4222,10.0.0.2:4222)",
    required: true,
    parse: parsers.natsServers,
  },
  // The service's own user on the bus (docs/adr/0026-bus-authorization.md); credentials in NATS_URL work too.
  NATS_USER: { description: 'user name on the NATS server (e.g. management-service); none: the one in NATS_URL, if any', parse: parsers.string },
  NATS_PASSWORD: { description: 'password of NATS_USER', secret: true, parse: parsers.string },
  NATS_STREAM_REPLICAS: service.NATS_STREAM_REPLICAS,
  JWT_PRIVATE_KEY: {
    description: 'ES256 (P-256) private key in PKCS#8 PEM that signs access tokens; `npm run cli -- signing-key --out key.pem` makes one',
    required: true,
    secret: true,
    parse: parseSigningKey,
  },
  JWT_ISSUER: { description: 'the `iss` of access tokens this service signs', default: 'investment-platform', parse: parsers.string },
  ACCESS_TOKEN_TTL_SECONDS: { description: 'lifetime of access tokens', default: 300, parse: parsers.integer(30, 86_400) },
  REFRESH_TOKEN_TTL_SECONDS: { description: 'lifetime of refresh tokens', default: 30 * 86_400, parse: parsers.integer(300, 365 * 86_400) },
  TOKEN_REVOCATION_CHECK_MS: {
    description:
      "how often each replica reads a tenant's revoked credentials and state: a revoked access key, a deleted user, a reused refresh-token chain or a disabled tenant stops its access tokens within this bound (0: read on every request)",
    default: 5_000,
    parse: parsers.integer(0, 60_000),
  },
  OIDC_ISSUER: { description: 'an external OpenID Connect issuer whose tokens are also accepted (optional)', parse: parsers.url('https', 'http') },
  OIDC_AUDIENCE: { description: 'the audience that tokens of OIDC_ISSUER must carry', parse: parsers.string },
  OIDC_JWKS_URL: { description: 'the JWKS URL of OIDC_ISSUER', parse: parsers.url('https', 'http') },
  OIDC_TENANT_CLAIM: { description: 'the claim of OIDC tokens that names the tenant id', default: 'tenant_id', parse: parsers.string },
  BODY_LIMIT_BYTES: { description: 'largest accepted request body', default: 1_048_576, parse: parsers.integer(1024, 100 * 1_048_576) },
  OUTBOX_RELAY: { description: 'publish outbound events from the outbox to NATS in this process', default: true, parse: parsers.boolean },
  RELAY_PARTITIONS: {
    description:
      'partitions of the outbox by tenant, each published by one replica at a time; the same number on every replica (docs/adr/0032-relay-partitions.md)',
    default: 1,
    parse: parsers.integer(1, 256),
  },
  OUTBOX_RETENTION_DAYS: {
    description: 'days published events stay in the outbox for GET /events/; the nightly retention removes older ones (docs/adr/0061-retention.md)',
    default: 7,
    parse: parsers.integer(1, 3650),
  },
  RETENTION_ERASED_USER_YEARS: {
    description:
      "years an erased user's earlier versions (personal fields already null) are kept beside the financial records that name the user, after which the nightly retention removes them (docs/adr/0059-personal-data-erasure.md)",
    default: 10,
    parse: parsers.integer(1, 100),
  },
  RETENTION_AT: {
    description:
      'UTC time of day (HH:MM) of the nightly retention run, which removes expired Idempotency-Keys, rate-limit counters, token revocations and refresh-token chains and old published outbox rows (docs/adr/0061-retention.md); `off`: no nightly run (`npm run cli -- retention run` still runs it)',
    default: '03:00',
    // Empty means the default here, so switching it off takes a word.
    parse: (raw: string) => {
      if (raw === 'off') return '';
      if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(raw)) throw new Error(`"${raw}" is neither a UTC time of day HH:MM (e.g. 03:00) nor off`);
      return raw;
    },
  },
  RETENTION_BATCH_ROWS: {
    description: 'rows the retention run removes per statement (each a short transaction of its own)',
    default: 1000,
    parse: parsers.integer(1, 100_000),
  },
  EVENT_FORWARDERS: { description: "forward each tenant's events to its configured destination from this process", default: true, parse: parsers.boolean },
  OPTIMIZER_RESULTS: {
    description: 'store optimizer results (platform.optimizer.results) from this process; every replica that does shares one durable consumer',
    default: true,
    parse: parsers.boolean,
  },
  OPTIMIZER_ACK_WAIT_MS: {
    description:
      'how long an optimizer result may stay unacknowledged by the replica that took it (one that died before storing it) before another replica gets it (applies when the durable consumer is first created)',
    default: 30_000,
    parse: parsers.integer(100, 3_600_000),
  },
  OPTIMIZER_RESULT_TIMEOUT_MS: {
    description: 'how long an optimizer request waits for its result before it is sent again as a new attempt',
    default: 60_000,
    parse: parsers.integer(100, 86_400_000),
  },
  HISTORY_TIMEOUT_MS: {
    description:
      "how long GET /portfolios/{id}/history/ waits for the data service's answer over NATS; none by then (or no data service listening) is 503 unavailable",
    default: 10_000,
    parse: parsers.integer(100, 120_000),
  },
  OPTIMIZER_MAX_ATTEMPTS: {
    description: 'unanswered optimizer requests after which the optimization ends as FAILURE (the optimizer did not answer)',
    default: 3,
    parse: parsers.integer(1, 100),
  },
  OPTIMIZER_NIGHTLY_AT: {
    description: 'UTC time of day (HH:MM, e.g. 02:00) of the nightly optimization of every ACTIVE robo-advised portfolio; empty: no nightly batch',
    default: '',
    parse: timeOfDay,
  },
  IDEMPOTENCY_RETENTION_DAYS: { description: 'days a POST response is kept for replay under its Idempotency-Key', default: 7, parse: parsers.integer(1, 365) },
  IDEMPOTENCY_WAIT_MS: {
    description: 'how long a request waits for a running one with the same Idempotency-Key before answering 409 idempotency_in_flight',
    default: 5_000,
    parse: parsers.integer(0, 60_000),
  },
  RATE_LIMIT_WINDOW_SECONDS: {
    description: 'length of the window of every request limit below (docs/adr/0023-rate-limits.md)',
    default: 60,
    parse: parsers.integer(1, 3600),
  },
  RATE_LIMIT_ACCESS_KEY: {
    description:
      "requests per window of one access key's tokens (a machine client); a tenant's own value (`cli tenant set-limits --requests-per-minute`) wins; 0: no limit",
    default: 6000,
    parse: parsers.integer(0, 10_000_000),
  },
  RATE_LIMIT_USER: {
    description: "requests per window of one end user's tokens; a tenant's own value (`--user-requests-per-minute`) wins; 0: no limit",
    default: 120,
    parse: parsers.integer(0, 10_000_000),
  },
  RATE_LIMIT_ADDRESS: {
    description: 'requests per window from one client address to the token endpoints (login, refresh-token, user-token); 0: no limit',
    default: 120,
    parse: parsers.integer(0, 10_000_000),
  },
  LOGIN_FAILURES_FREE: {
    description:
      'consecutive failed logins of one access key id from one client address that are answered at once; each further one blocks logins of that key from that address for a growing time (LOGIN_BLOCK_SECONDS, doubled up to LOGIN_BLOCK_MAX_SECONDS); other addresses are not blocked; a successful login from that address resets the count',
    default: 5,
    parse: parsers.integer(1, 1000),
  },
  LOGIN_ADDRESS_FAILURES_FREE: {
    description:
      'failed logins from one client address within LOGIN_FAILURE_WINDOW_SECONDS that are answered at once; each further one blocks logins from that address the same growing way',
    default: 20,
    parse: parsers.integer(1, 100_000),
  },
  LOGIN_BLOCK_SECONDS: { description: 'first block after too many failed logins', default: 1, parse: parsers.integer(1, 3600) },
  LOGIN_BLOCK_MAX_SECONDS: { description: 'longest block after failed logins', default: 300, parse: parsers.integer(1, 3600) },
  LOGIN_FAILURE_WINDOW_SECONDS: {
    description: 'how long failed logins are counted, from the first of a series (a success of the key from that address ends its series at once)',
    default: 900,
    parse: parsers.integer(1, 86_400),
  },
  BROKER_SETTLEMENT: { description: 'execute broker instructions (SERVICE integration) in this process', default: true, parse: parsers.boolean },
  BROKER_SIMULATED_LATENCY_MS: {
    description: 'time the built-in simulated broker takes to execute a cash move or orders',
    default: 500,
    parse: parsers.integer(0, 600_000),
  },
  BROKER_SIMULATED_REFUSE_RATE: {
    description:
      'share (0–1) of instructions the built-in simulated broker refuses: a refused deposit or withdrawal is cancelled, refused orders leave the optimization REFUSED',
    default: 0,
    parse: rate,
  },
  BROKER_SIMULATED_FAILURE_RATE: {
    description:
      'share (0–1) of calls to the built-in simulated broker that fail transiently (before or after executing); the settlement job retries them, booking each once',
    default: 0,
    parse: rate,
  },
  MIGRATE_ON_START: { description: 'apply pending database migrations at start', default: true, parse: parsers.boolean },
  TRUSTED_PROXIES: service.TRUSTED_PROXIES,
  CONSOLE_DATA_SERVICE_URL: {
    description:
      "the data service's URL as the administration console's browser reaches it (e.g. http://127.0.0.1:8081), for its data pages and valuations; that service's CORS_ALLOWED_ORIGINS must name this service's origin; unset: the console works without them (docs/adr/0037-console-and-the-data-service.md)",
    parse: consoleDataUrl,
  },
  CONSOLE_DIR: {
    description: 'folder of the built administration console served at /console/ (`npm run build:console` builds it; `npm ci` does too)',
    default: fileURLToPath(new URL('../../console/dist', import.meta.url)),
    parse: parsers.string,
  },
  OVERLOAD_SHEDDING: service.OVERLOAD_SHEDDING,
  OVERLOAD_EVENT_LOOP_DELAY_MS: service.OVERLOAD_EVENT_LOOP_DELAY_MS,
  OVERLOAD_MIN_LIMIT: service.OVERLOAD_MIN_LIMIT,
  OVERLOAD_DB_WAIT_MS: {
    description:
      'the wait for a Postgres connection of the pool (DATABASE_POOL_MAX), the longest in each sample and decayed, above which the limit of requests in flight falls (docs/adr/0062-overload-shedding.md)',
    default: 50,
    parse: parsers.integer(1, 60_000),
  },
  SHUTDOWN_GRACE_MS: service.SHUTDOWN_GRACE_MS,
  METRICS_HOST: service.METRICS_HOST,
  METRICS_PORT: service.METRICS_PORT,
  OTEL_EXPORTER_OTLP_ENDPOINT: service.OTEL_EXPORTER_OTLP_ENDPOINT,
  LOG_LEVEL: service.LOG_LEVEL,
} as const;

export type ManagementConfig = ReturnType<typeof loadManagementConfig>;

export function loadManagementConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(managementSettings, env);
  const oidc = [config.OIDC_ISSUER, config.OIDC_AUDIENCE, config.OIDC_JWKS_URL];
  if (oidc.some((v) => v !== undefined) && oidc.some((v) => v === undefined)) {
    throw new ConfigError(['OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL are set together or not at all.']);
  }
  return config;
}

/** The settings the retention run applies, for the operator's `npm run cli -- retention run` (the same variables as the service). */
export function loadRetentionConfig(env: NodeJS.ProcessEnv = process.env) {
  const { OUTBOX_RETENTION_DAYS, RETENTION_ERASED_USER_YEARS, RETENTION_BATCH_ROWS } = managementSettings;
  return loadConfig({ OUTBOX_RETENTION_DAYS, RETENTION_ERASED_USER_YEARS, RETENTION_BATCH_ROWS }, env);
}
