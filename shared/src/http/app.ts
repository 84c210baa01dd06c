import express, { type NextFunction, type Request, type Response } from 'express';
import { withRoundTrips } from '../round-trips.ts';
import { ProblemError } from '../problem.ts';
import { withTraceContext } from '../tracing.ts';
import type { ApiAppOptions } from './app-options.ts';
import { decodeBody } from './body.ts';
import { contractApi } from './contract-routing.ts';
import { corsMiddleware } from './cors.ts';
import { errorAnswer } from './error-answer.ts';
import { fastParseRequest } from './parse-request.ts';
import { requestScope } from './request-scope.ts';
import { requestState } from './request-state.ts';
import { precompileRoutes } from './routes.ts';

/**
 * The express app of a service: every request is routed and validated by openapi-backend against
 * the contract, authenticated by the contract's security schemes, and answered by the handler
 * registered under its operationId (501 when none is). Every failure is problem+json.
 */
export async function createApiApp<P extends { tenantId: string } | undefined>(options: ApiAppOptions<P>): Promise<express.Express> {
  const api = await contractApi(options);

  const route = precompileRoutes(api);
  fastParseRequest(api.router);
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
  app.use(requestScope(options));
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
  // After CORS (a browser page reads the 503 and its Retry-After), before the body, routing and
  // authentication: a shed request costs almost nothing and changes nothing (docs/adr/0062-overload-shedding.md).
  if (options.admission) app.use(options.admission.middleware);
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
  app.use(errorAnswer(options.mapError));
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
