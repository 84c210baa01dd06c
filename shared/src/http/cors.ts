import type { NextFunction, Request, Response } from 'express';

/**
 * Cross-origin access for the browser pages of configured origins (the administration console
 * calling the data service, docs/adr/0037-console-and-the-data-service.md). An origin that is not
 * configured gets no CORS header at all, so the browser keeps its answers from the page; its
 * preflight goes on to the contract's routing like any OPTIONS request (405).
 */
export type CorsOptions = { allowedOrigins: readonly string[] };

/** What the pages may send: the credentials of both services, JSON bodies, retries and tracing. */
const ALLOWED_HEADERS = 'Accept, Authorization, Content-Type, Idempotency-Key, If-Match, X-Api-Key, X-Request-Id, X-Tenant-Id, traceparent';
/** What the pages may read besides the simple headers: the id to quote, and when to retry. */
const EXPOSED_HEADERS = 'X-Request-Id, Retry-After, Idempotency-Replayed, Location';
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
/** How long a browser may reuse a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = '600';

/** Express middleware answering preflights and marking answers for the allowed origins only. */
export function corsMiddleware(options: CorsOptions) {
  const allowed = new Set(options.allowedOrigins);
  return (req: Request, res: Response, next: NextFunction) => {
    // Answers differ by Origin once any origin is allowed: caches must keep them apart.
    res.setHeader('Vary', 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !allowed.has(origin)) return next();
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE);
      res.statusCode = 204;
      res.end();
      return;
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    next();
  };
}

/**
 * A setting's list of origins (`https://console.example.com,http://127.0.0.1:8080`): each a scheme,
 * host and optional port, no path; throws with a message saying how to write one.
 */
export function parseOrigins(raw: string): string[] {
  const origins = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  for (const origin of origins) {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
      throw new Error(
        `"${origin}" is not an origin: write the scheme, host and port only, as the browser sends it (e.g. https://console.example.com or http://127.0.0.1:8080), comma-separated, no path or trailing slash`,
      );
    }
  }
  return origins;
}
