import { decideRetry, type Outcome, type RetryPolicy } from './retry-policy.ts';
import { sleep } from './sleep.ts';
import type { TokenSession } from './token-session.ts';

export type RetryEvent = { type: 'retry'; method: string; url: string; attempt: number; delayMs: number; reason: string };

export type TransportOptions = {
  /** What sends one request (globalThis.fetch by default). */
  fetch: (request: Request) => Promise<Response>;
  retry: RetryPolicy;
  /** Gives each request its bearer token and renews it once on a 401; absent: headers as given. */
  session?: TokenSession;
  newKey: () => string;
  now: () => number;
  random: () => number;
  onRetry?: (event: RetryEvent) => void;
};

/**
 * The `fetch` of a client: one logical call, sent as many times as the retry policy allows.
 * A POST without an `Idempotency-Key` gets a new one, and every attempt of that call sends the same
 * key and body, so the service performs it once (docs/adr/0010-idempotency-key.md). A 401 to the
 * session's token renews it and sends once more. The request's signal aborts a call between
 * attempts as well as during one.
 */
export function transport(options: TransportOptions): (request: Request) => Promise<Response> {
  const { session, retry, now, random } = options;
  return async (request) => {
    const method = request.method.toUpperCase();
    const headers = new Headers(request.headers);
    if (method === 'POST' && !headers.has('idempotency-key')) headers.set('idempotency-key', options.newKey());
    const keyed = headers.has('idempotency-key');
    const body = request.body ? await request.arrayBuffer() : undefined;
    const { signal } = request;
    const started = now();
    let token = session ? await session.accessToken() : undefined;
    let renewedOn401 = false;
    for (let attempt = 1; ;) {
      if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await options.fetch(new Request(request.url, { method, headers, body, signal, redirect: request.redirect }));
      } catch (error) {
        if (signal.aborted) throw error;
        failure = error;
      }
      if (response?.status === 401 && session && token !== undefined && !renewedOn401) {
        renewedOn401 = true;
        await response.body?.cancel();
        token = await session.rejected(token);
        continue;
      }
      const outcome: Outcome = response ? { status: response.status, retryAfter: response.headers.get('retry-after') } : { networkError: true };
      const decision = decideRetry({ attempt, method, keyed, outcome, elapsedMs: now() - started, now: now(), policy: retry, random });
      if (!decision.retry) {
        if (response) return response;
        throw failure;
      }
      await response?.body?.cancel();
      options.onRetry?.({ type: 'retry', method, url: request.url, attempt, delayMs: decision.delayMs, reason: decision.reason });
      await sleep(decision.delayMs, signal);
      attempt++;
      // The token may have come to its renewal time while the call waited.
      if (session) token = await session.accessToken();
    }
  };
}
