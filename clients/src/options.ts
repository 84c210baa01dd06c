import type { Middleware } from 'openapi-fetch';
import { newIdempotencyKey } from './idempotency-key.ts';
import { DEFAULT_RETRY, NO_RETRY, type RetryPolicy } from './retry-policy.ts';
import type { TokenEvent } from './token-session.ts';
import { transport, type RetryEvent } from './transport.ts';

/** What both clients take besides their credentials. */
export type CommonOptions = {
  baseUrl: string;
  /** Retries on 429/503 and lost answers (defaults: DEFAULT_RETRY); false: every call is sent once. */
  retry?: Partial<RetryPolicy> | false;
  /**
   * 'throw' (default): a failed answer rejects the call with an ApiProblem. 'return': it resolves
   * with openapi-fetch's `{ error, response }`, for code that inspects refusals itself.
   */
  problems?: 'throw' | 'return';
  /** openapi-fetch middleware run on every call (their onResponse sees the final answer, after retries). */
  middleware?: Middleware[];
  /** Sees each retry, login and renewal (logs, metrics). */
  onEvent?: (event: ClientEvent) => void;
  /** Sends one request; globalThis.fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
};

export type ClientEvent = RetryEvent | TokenEvent;

/** The media types answers are typed by: JSON for successes (not Arrow, asked for with `parseAs`), problem+json for refusals. */
export type JsonMedia = 'application/json' | 'application/problem+json';

export const retryPolicy = (retry: CommonOptions['retry']): RetryPolicy => (retry === false ? NO_RETRY : { ...DEFAULT_RETRY, ...retry });

/** The transport of a client without a token session (the data service, the token endpoints). */
export const plainTransport = (options: CommonOptions) =>
  transport({
    fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
    retry: retryPolicy(options.retry),
    newKey: () => newIdempotencyKey(),
    now: Date.now,
    random: Math.random,
    onRetry: options.onEvent,
  });
