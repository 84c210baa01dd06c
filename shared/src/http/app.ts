import express, { type NextFunction, type Request, type Response } from 'express';
import { OpenAPIBackend, type Context, type Handler } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { OpenAPIV3_1 } from 'openapi-types';
import { newUlid } from '../ids.ts';
import { accessLog, type Logger } from '../logger.ts';
import type { HttpMetrics } from '../metrics.ts';
import { ProblemError, problemBody } from '../problem.ts';
import { withRoundTrips } from '../round-trips.ts';
import { SpanKind, traceFields, withTraceContext, type Tracing } from '../tracing.ts';
import { decodeBody, mediaType } from './body.ts';
import { COMPRESSION_MIN_BYTES, compressResponse } from './compression.ts';
import { corsMiddleware, type CorsOptions } from './cors.ts';
import { applyRateLimits, type RateLimitStore, type RateLimitsFor } from './rate-limit.ts';
import { precompileRoutes } from './routes.ts';
import { fastParseRequest } from './parse-request.ts';
import { RequestState, requestState } from './request-state.ts';
import { normaliseIdentifierFields } from './identifier-fields.ts';
import { unstorableIssues } from './storable.ts';
import { issuesProblem, validationProblem } from './validation.ts';

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

const REQUEST_ID = /^[\x21-\x7E]{1,128}$/;

/**
 * openapi-backend set up for a dereferenced OpenAPI 3.1 contract: quick start (its own 3.1
 * initialisation would leave routes unmatched), ajv with formats, lazy validators.
 */
export function openApiBackend(definition: OpenAPIV3_1.Document): OpenAPIBackend {
  return new OpenAPIBackend({
    definition: definition as never,
    quick: true,
    strict: true,
    // Contract paths keep the trailing slash the interface shows; contractPath() accepts both forms.
    ignoreTrailingSlashes: false,
    coerceTypes: true,
    ajvOpts: { allErrors: true, strict: false },
    customizeAjv: (ajv) => {
      addFormats.default(ajv as never);
      return ajv;
    },
  });
}

/**
 * The express app of a service: every request is routed and validated by openapi-backend against
 * the contract, authenticated by the contract's security schemes, and answered by the handler
 * registered under its operationId (501 when none is). Every failure is problem+json.
 */
export async function createApiApp<P extends { tenantId: string } | undefined>(options: ApiAppOptions<P>): Promise<express.Express> {
  const { logger } = options;
  const api = openApiBackend(options.definition);
  const identifierFields = new Set(options.identifierFields ?? []);

  const toHandler =
    (handler: OperationHandler<P>): Handler =>
    async (c: Context, req: Request, res: Response) => {
      const principal = options.principal(c.security ?? {});
      const state = requestState(res);
      const ctx: HandlerContext<P> = {
        operationId: c.operation.operationId!,
        params: c.request.params as Record<string, string>,
        query: c.request.query as Record<string, unknown>,
        headers: c.request.headers as HandlerContext<P>['headers'],
        body: c.request.requestBody,
        principal,
        requestId: state.requestId,
        get log() {
          return state.log;
        },
        req,
        get signal() {
          return state.signal;
        },
      };
      const result = await handler(ctx);
      if (!state.clientLeft) await send(req, res, result);
    };

  const operationHandlers: Record<string, Handler> = {};
  for (const [operationId, handler] of Object.entries(options.handlers)) operationHandlers[operationId] = toHandler(handler);
  operationHandlers.livez = toHandler(async () => ({ status: 200, body: { status: 'ok' } }));
  operationHandlers.readyz = toHandler(async () => readiness(options.readiness));

  api.register({
    ...operationHandlers,
    postRoutingHandler: (c: Context, req: Request, res: Response) => {
      requestState(res).operationId = c.operation?.operationId;
      if (c.operation) refuseUnsupportedBody(c.operation as OpenAPIV3_1.OperationObject, req);
    },
    postSecurityHandler: async (c: Context, req: Request, res: Response) => {
      const principal = c.security?.authorized ? options.principal(c.security) : undefined;
      if (principal) requestState(res).setTenant(principal.tenantId);
      const operationId = c.operation.operationId!;
      if (options.rateLimits && operationId !== 'livez' && operationId !== 'readyz') {
        res.set(await applyRateLimits(options.rateLimits, { operationId, principal, address: req.ip ?? '' }));
      }
      if (c.security?.authorized || !c.operation.security?.length) {
        refuseUnstorable(c);
        if (identifierFields.size > 0) refuseIdentifiers(c, identifierFields);
        options.beforeValidation?.(c.operation.operationId!, c.request.requestBody);
      }
    },
    notFound: async () => {
      throw new ProblemError(404, 'not_found', 'No such route.');
    },
    methodNotAllowed: async (_c: Context, req: Request) => {
      throw new ProblemError(405, 'method_not_allowed', `${req.method} is not allowed on this path.`);
    },
    notImplemented: async (c: Context) => {
      throw new ProblemError(501, 'not_implemented', `${c.operation.operationId} is in the contract but not built yet.`);
    },
    unauthorizedHandler: async (c: Context) => {
      const failure = Object.values(c.security ?? {}).find(
        (result): result is { error: unknown } => typeof result === 'object' && result !== null && 'error' in result,
      );
      // A 401/403 of a security handler is the answer; any other failure (the key store is down)
      // is a 500, not a reason to tell a client its credentials are wrong.
      if (failure) throw failure.error;
      throw new ProblemError(401, 'unauthenticated', 'Authentication is required.');
    },
    validationFail: async (c: Context) => {
      throw validationProblem(c.validation.errors ?? []);
    },
  });
  for (const [scheme, handler] of Object.entries(options.securityHandlers)) {
    api.registerSecurityHandler(scheme, (_c: Context, req: Request) => handler(req));
  }
  await api.init();
  const route = precompileRoutes(api);
  fastParseRequest(api.router);
  const log = accessLog(logger);
  const readBody = express.raw({ type: () => true, limit: options.bodyLimitBytes });

  /** Routes, validates and answers a request whose body is read. */
  const handle = async (req: Request, res: Response, next: NextFunction) => {
    try {
      const url = req.originalUrl;
      const mark = url.indexOf('?');
      const rawQuery = mark >= 0 ? url.slice(mark + 1) : '';
      // The router decodes path parameters and would throw on `%ED%A0%80` (a surrogate) or `%E2%8`:
      // such a path names nothing, like any id of the wrong form.
      if (!isPercentEncodedUtf8(req.path)) throw new ProblemError(404, 'not_found', 'No such resource: the path is not percent-encoded UTF-8.');
      const path = route.contractPath(req.method, req.path);
      // The request's span is active while it is handled: outbox rows it writes carry its traceparent.
      const state = requestState(res);
      const scope = withRoundTrips(state.trace?.context);
      state.roundTrips = scope.roundTrips;
      await withTraceContext(scope.context, () =>
        api.handleRequest({ method: req.method, path, query: rawQuery, headers: req.headers as never, body: req.body }, req, res),
      );
    } catch (error) {
      next(error);
    }
  };

  const app = express();
  app.set('trust proxy', options.trustedProxies ?? 0);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((req, res, next) => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : newUlid();
    const trace = options.tracing?.start('http request', req.headers.traceparent as string | undefined, SpanKind.SERVER);
    const state = new RequestState(requestId, process.hrtime.bigint(), trace, logger);
    res.locals.request = state;
    res.setHeader('X-Request-Id', requestId);
    // 'close' comes once the answer is out, or when the client left before it (the response then never ended).
    res.once('close', () => {
      const ids = { request_id: requestId, ...(trace ? traceFields(trace.span) : {}), tenant: state.tenant };
      const durationMs = state.elapsedMs();
      if (!res.writableEnded) {
        state.abort();
        trace?.span.end();
        log({
          message: 'request closed by the client before its answer',
          method: req.method,
          path: req.path,
          operation: state.operationId,
          duration_ms: durationMs,
          ...ids,
        });
        return;
      }
      log({ message: 'request', method: req.method, path: req.path, operation: state.operationId, status: res.statusCode, duration_ms: durationMs, ...ids });
      options.metrics?.observe(state.operationId ?? 'unmatched', res.statusCode, durationMs / 1000, state.roundTrips?.count ?? 0);
      if (trace) {
        trace.span.updateName(state.operationId ?? 'unmatched');
        trace.span.setAttributes({ 'http.request.method': req.method, 'http.response.status_code': res.statusCode });
        trace.span.end();
      }
    });
    next();
  });
  for (const [name, pages] of Object.entries(options.pages ?? {})) {
    app.use((req, res, next) => {
      const state = requestState(res);
      state.operationId = name;
      void pages(req, res, (error?: unknown) => {
        state.operationId = undefined;
        next(error);
      });
    });
  }
  if (options.cors && options.cors.allowedOrigins.length > 0) app.use(corsMiddleware(options.cors));
  app.use((req, res, next) => {
    // A request without a body (no Content-Length, no Transfer-Encoding) has nothing to read or decode.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      req.body = undefined;
      return handle(req, res, next);
    }
    readBody(req, res, (error?: unknown) =>
      error ? next(error) : decodeBody(req, res, (failed?: unknown) => (failed ? next(failed) : void handle(req, res, next))),
    );
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const state = requestState(res);
    // Work stopped because its client left: nobody is there to answer, and nothing failed.
    if (state.isAbortReason(error)) return;
    const problem = toProblem(error, options.mapError);
    if (problem.code === 'internal_error') {
      state.log.error('request failed', { error: error instanceof Error ? error.stack : String(error) });
    } else if (problem.code === 'unavailable') {
      state.log.warn('not ready', { detail: problem.detail, error: error instanceof ProblemError ? undefined : String(error) });
    }
    if (res.headersSent) return res.end();
    res.status(problem.status).set(problem.extra.headers ?? {});
    res.type('application/problem+json').send(JSON.stringify(problemBody(problem, state.requestId)));
  });
  return app;
}

function isPercentEncodedUtf8(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

async function send(req: Request, res: Response, result: HandlerResult): Promise<void> {
  const json = isPlainJson(result) ? JSON.stringify(result.body) : undefined;
  if (json !== undefined && Buffer.byteLength(json) < COMPRESSION_MIN_BYTES) {
    // Too small to be compressed: what express's status/set/type/send write for a JSON value, written
    // directly (docs/adr/0031-http-hot-path.md); Node adds the Content-Length of a body given to end().
    res.statusCode = result.status;
    if (result.headers) for (const name in result.headers) res.setHeader(name, result.headers[name]!);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(json);
    return;
  }
  res.status(result.status).set(result.headers ?? {});
  if (result.body === undefined) {
    res.end();
    return;
  }
  const { body } = result;
  // A Buffer view of the bytes, not a copy (cached answers run to megabytes).
  const bytes =
    body instanceof Uint8Array
      ? Buffer.isBuffer(body)
        ? body
        : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
      : Buffer.from(json ?? JSON.stringify(body), 'utf8');
  res.type(result.contentType ?? (body instanceof Uint8Array ? 'application/octet-stream' : 'application/json'));
  // Large answers go compressed when the client asks (docs/adr/0029-arrow-and-compression.md).
  const encoded = await compressResponse(req.get('accept-encoding'), bytes, res.get('content-type') ?? '', res.get('content-encoding') !== undefined);
  if (encoded.vary) res.vary('Accept-Encoding');
  if (encoded.coding) res.set('Content-Encoding', encoded.coding);
  res.send(encoded.body);
}

/** A JSON value as the default answer, of a status that has a body (express strips those of 204 and 304), without its own Content-Encoding. */
const isPlainJson = (result: HandlerResult) =>
  result.body !== undefined &&
  !Object.keys(result.headers ?? {}).some((name) => name.toLowerCase() === 'content-encoding') &&
  result.contentType === undefined &&
  !Buffer.isBuffer(result.body) &&
  !(result.body instanceof Uint8Array) &&
  Number.isInteger(result.status) &&
  result.status >= 200 &&
  result.status <= 599 &&
  result.status !== 204 &&
  result.status !== 304;

function refuseUnsupportedBody(operation: OpenAPIV3_1.OperationObject, req: Request): void {
  if (req.body === undefined) return;
  const accepted = Object.keys((operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content ?? {});
  const type = mediaType(req);
  if (accepted.length === 0) return;
  if (!type || !accepted.includes(type)) {
    throw new ProblemError(415, 'unsupported_media_type', `Send the body as ${accepted.join(' or ')}${type ? `, not ${type}` : ''}.`);
  }
}

/**
 * Text that no store can hold (NUL, unpaired surrogates) or bodies nested deeper than any
 * contract's, in any parameter or body of any operation: refused here, once, with the loc of the
 * value, before a handler could pass it to Postgres.
 */
function refuseUnstorable(c: Context): void {
  const issues = unstorableIssues({ path: c.request.params, query: c.request.query, body: c.request.requestBody });
  if (issues.length > 0) throw issuesProblem(issues);
}

/** Identifiers in their stored form (NFC), or a 422 naming each one that is refused. */
function refuseIdentifiers(c: Context, names: ReadonlySet<string>): void {
  const issues = normaliseIdentifierFields(c.request.requestBody, names);
  if (issues.length > 0) throw issuesProblem(issues);
}

async function readiness(checks: ReadinessChecks): Promise<HandlerResult> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        return [name, (await check()) === 'degraded' ? 'degraded' : 'ok'] as const;
      } catch {
        return [name, 'failing'] as const;
      }
    }),
  );
  const summary = Object.fromEntries(results);
  const failing = results.filter(([, state]) => state === 'failing').map(([name]) => name);
  if (failing.length === 0) return { status: 200, body: { status: results.some(([, state]) => state === 'degraded') ? 'degraded' : 'ok', checks: summary } };
  throw new ProblemError(503, 'unavailable', `Not ready: ${failing.join(', ')} not answering.`, { checks: summary });
}

/** The one place where an error becomes a problem: anything unknown is a 500 without details. */
function toProblem(error: unknown, mapError?: (error: unknown) => ProblemError | undefined): ProblemError {
  if (error instanceof ProblemError) return error;
  const mapped = mapError?.(error);
  if (mapped) return mapped;
  const { type, status, code, encoding } = (error ?? {}) as { type?: string; status?: number; code?: string; encoding?: string };
  if (type === 'entity.too.large') return new ProblemError(413, 'payload_too_large', 'The request body is larger than the limit.');
  if (type === 'request.aborted') return new ProblemError(400, 'malformed_json', 'The request body was not received completely.');
  if (type === 'request.size.invalid') return new ProblemError(400, 'malformed_json', 'The request body is not as long as its Content-Length says.');
  if (type === 'encoding.unsupported') {
    return new ProblemError(
      415,
      'unsupported_media_type',
      `Content-Encoding ${encoding ?? ''} is not supported: send the body as it is, or compressed with gzip, deflate or br.`,
    );
  }
  // The body parser marks a failed decompression 400 and leaves zlib's code on it.
  if (status === 400 && typeof code === 'string' && /^(Z_|ERR_)/.test(code)) {
    return new ProblemError(400, 'malformed_json', 'The request body does not decompress as its Content-Encoding says.');
  }
  return new ProblemError(500, 'internal_error', 'An unexpected error occurred; the request_id identifies it in the logs.');
}
