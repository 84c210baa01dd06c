import type express from 'express';
import type { Request } from 'express';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { BuildInfo } from '../build-info.ts';
import type { Logger } from '../logger.ts';
import type { HttpMetrics } from '../metrics.ts';
import type { ProblemError } from '../problem.ts';
import type { Tracing } from '../tracing.ts';
import type { Admission } from './admission.ts';
import type { CorsOptions } from './cors.ts';
import type { RateLimitStore, RateLimitsFor } from './rate-limit.ts';

// What a service gives the shared app (createApiApp), and what its operation handlers get and give.

export type HandlerContext<P> = {
  operationId: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** Who calls; undefined on the operations the contract leaves open (`security: []`). */
  principal: P;
  requestId: string;
  log: Logger;
  req: Request;
  /**
   * Aborted when the client closes the connection before the answer is complete; its `reason` is
   * what work given the signal rejects with, which is then answered with nothing.
   */
  signal: AbortSignal;
};

export type HandlerResult = {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Defaults to application/json for values, application/octet-stream for bytes. */
  contentType?: string;
  /**
   * A body written piece by piece as it is produced, instead of `body`: sent chunked and
   * uncompressed, each piece once the previous one has drained. An error thrown after the first
   * piece can no longer become a problem answer: the connection is cut, so the client sees an
   * incomplete body rather than a complete-looking one. The iterator's `return` runs either way.
   */
  stream?: AsyncIterable<string | Uint8Array>;
};

export type OperationHandler<P> = (ctx: HandlerContext<P>) => Promise<HandlerResult>;

/**
 * Checks of /readyz: each resolves when its dependency answers and rejects otherwise; one that
 * resolves to 'degraded' does not answer but the service still serves without it (200 `degraded`).
 */
export type ReadinessChecks = Record<string, () => Promise<unknown>>;

export type ApiAppOptions<P> = {
  definition: OpenAPIV3_1.Document;
  handlers: Record<string, OperationHandler<P>>;
  /**
   * One handler per security scheme of the contract. Each returns what the scheme proves (a
   * principal) or throws a ProblemError (401 or 403), which becomes the answer.
   */
  securityHandlers: Record<string, (req: Request) => Promise<unknown>>;
  /** Picks the principal out of the results of the security handlers. */
  principal: (security: Record<string, unknown>) => P;
  readiness: ReadinessChecks;
  /** What /livez tells besides `ok`: the version, image revision and Node.js (0047). */
  build?: BuildInfo;
  logger: Logger;
  bodyLimitBytes: number;
  /**
   * Reverse proxies in front of the service whose `X-Forwarded-For` is believed (0: none): the client
   * address (`req.ip`, rate limits per address) is then the one they report.
   */
  trustedProxies?: number;
  /** Maps a service's own domain errors to problems; the one place where that happens. */
  mapError?: (error: unknown) => ProblemError | undefined;
  /**
   * A service's own check of an authenticated request before the contract validates it, for a
   * mistake whose contract message would mislead (it throws a domain error or a ProblemError).
   */
  beforeValidation?: (operationId: string, body: unknown) => void;
  /**
   * Names of the body fields that hold identifiers (`external_id`, `email`): at any depth, they are
   * put into their stored form or refused with a 422 at their loc before the contract validates
   * the body (docs/adr/0040-identifiers-as-people-read-them.md).
   */
  identifierFields?: readonly string[];
  /** A span per request continuing its `traceparent`, its trace id in the request's log lines (docs/adr/0024-observability.md). */
  tracing?: Tracing;
  /** Duration of each request by operationId and status. */
  metrics?: HttpMetrics;
  /**
   * The service's rate limits (docs/adr/0023-rate-limits.md): counted once the caller is known and
   * before validation; /livez and /readyz are never limited.
   */
  rateLimits?: { store: RateLimitStore; limitsFor: RateLimitsFor<P> };
  /**
   * Admission control (docs/adr/0062-overload-shedding.md): requests beyond the adaptive limit in
   * flight are answered 503 at once, after CORS and before the body, routing and authentication;
   * /livez and /readyz are never shed. None: every request is admitted.
   */
  admission?: Admission;
  /**
   * Pages outside the contract (the API reference, docs/adr/0035-api-reference-pages.md; the
   * administration console, docs/adr/0036-administration-console.md), by the name their requests are
   * logged and measured under; each passes on the paths it does not serve.
   */
  pages?: Record<string, express.RequestHandler>;
  /**
   * Browser pages of these origins may call the interface (CORS, docs/adr/0037-console-and-the-data-service.md):
   * their preflights are answered here, before the contract's routing; other origins get no CORS header.
   */
  cors?: CorsOptions;
};
