import { parsers } from './config.ts';

/**
 * The settings every service reads the same way: how it sits behind proxies, stops, exposes its
 * metrics and traces, how many copies of the streams it asks NATS for, and logs. One definition,
 * so that the services cannot drift apart in a bound or a description; each service places them in its own settings, in the order its help lists them.
 * Only the metrics port differs, so that both services can run on one host with their defaults.
 */
export function serviceSettings(options: { metricsPort: number }) {
  return {
    TRUSTED_PROXIES: {
      description:
        'reverse proxies (e.g. the ingress) in front of the service whose X-Forwarded-For is believed: the client address of rate limits per address is then the one they report; 0: the connecting address',
      default: 0,
      parse: parsers.integer(0, 10),
    },
    OVERLOAD_SHEDDING: {
      description:
        'answer requests beyond the adaptive limit in flight at once with 503 unavailable and Retry-After, before any work, so that the admitted ones stay fast (docs/adr/0062-overload-shedding.md); false: admit every request',
      default: true,
      parse: parsers.boolean,
    },
    OVERLOAD_EVENT_LOOP_DELAY_MS: {
      description:
        "the event loop's delay, decayed, above which the limit of requests in flight falls (0.9 × those in flight); under it, and under the database target, a used limit grows again (docs/adr/0062-overload-shedding.md)",
      default: 50,
      parse: parsers.integer(1, 10_000),
    },
    OVERLOAD_MIN_LIMIT: {
      description:
        'the floor of the limit of requests in flight: it never falls under it, and falls at all only while twice as many are in flight, so that a late event loop with a few requests in flight (CPU taken by a neighbour, a collection of garbage) sheds nothing (docs/adr/0062-overload-shedding.md)',
      default: 16,
      parse: parsers.integer(1, 1000),
    },
    SHUTDOWN_GRACE_MS: { description: 'time requests in flight get to finish on SIGTERM', default: 10_000, parse: parsers.integer(0, 600_000) },
    METRICS_HOST: {
      description:
        'address the GET /metrics listener binds to, apart from HOST: loopback unless set (0.0.0.0 where a scraper reaches the pod, as in k8s/) (docs/adr/0024-observability.md)',
      default: '127.0.0.1',
      parse: parsers.ipAddress,
    },
    METRICS_PORT: {
      description:
        'port of GET /metrics (Prometheus text format), apart from the interface: no credentials, no rate limits, to be reached from inside the cluster only (docs/adr/0024-observability.md); 0: a free port',
      default: options.metricsPort,
      parse: parsers.integer(0, 65535),
    },
    OTEL_EXPORTER_OTLP_ENDPOINT: {
      description:
        'OTLP/HTTP endpoint that receives the trace spans (`/v1/traces` is appended), e.g. http://otel-collector:4318; unset: no span leaves the process',
      parse: parsers.url('http', 'https'),
    },
    NATS_STREAM_REPLICAS: {
      description:
        'copies of each JetStream stream kept by the NATS cluster (3 in a three-node cluster); set at start on streams made with another number; 1 for a single nats-server (docs/adr/0051-replicated-streams.md)',
      default: 1,
      parse: parsers.integer(1, 5),
    },
    LOG_LEVEL: { description: 'winston log level', default: 'info', parse: parsers.oneOf('error', 'warn', 'info', 'debug') },
  } as const;
}
