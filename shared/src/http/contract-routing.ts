import type { Request, Response } from 'express';
import { OpenAPIBackend, type Context, type Handler } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { OpenAPIV3_1 } from 'openapi-types';
import { ProblemError } from '../problem.ts';
import type { ApiAppOptions, HandlerContext, OperationHandler } from './app-options.ts';
import { mediaType } from './body.ts';
import { normaliseIdentifierFields } from './identifier-fields.ts';
import { applyRateLimits } from './rate-limit.ts';
import { readiness } from './readiness.ts';
import { requestState } from './request-state.ts';
import { sendResult } from './respond.ts';
import { unstorableIssues } from './storable.ts';
import { issuesProblem, validationProblem } from './validation.ts';

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
 * The contract's operations wired to their handlers: routing, authentication by the contract's
 * security schemes, rate limits, the checks before validation, validation, and the handler
 * registered under the operationId (501 when none is), whose result is sent.
 */
export async function contractApi<P extends { tenantId: string } | undefined>(options: ApiAppOptions<P>): Promise<OpenAPIBackend> {
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
      if (!state.clientLeft) await sendResult(req, res, result);
      // A stream holds what it reads from (a transaction) until it is told it will not be read.
      else await result.stream?.[Symbol.asyncIterator]().return?.();
    };

  const operationHandlers: Record<string, Handler> = {};
  for (const [operationId, handler] of Object.entries(options.handlers)) operationHandlers[operationId] = toHandler(handler);
  const liveness = { status: 'ok', ...options.build };
  operationHandlers.livez = toHandler(async () => ({ status: 200, body: liveness }));
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
  return api;
}

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
