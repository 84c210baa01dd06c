/**
 * When a call is sent again, and after how long: pure functions of what happened, the clock and a
 * random number, so that each rule is tested without I/O (docs/adr/0034-client-package.md).
 */

export type RetryPolicy = {
  /** Attempts in all, the first included (1: never retry). */
  maxAttempts: number;
  /** Back-off before the second attempt; each further one doubles it, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** No attempt starts later than this after the first one; a Retry-After beyond it ends the retries. */
  maxElapsedMs: number;
};

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 10_000, maxElapsedMs: 60_000 };
export const NO_RETRY: RetryPolicy = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, maxElapsedMs: 0 };

/** Methods whose repetition has the effect of one call (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * `Retry-After` in milliseconds from `now`: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Undefined when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Exponential back-off with full jitter: a random delay in [0, min(max, base·2^(attempt-1))). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/** What the last attempt got: an answer's status and Retry-After, or no answer at all. */
export type Outcome = { status: number; retryAfter?: string | null } | { networkError: true };

export type RetryInput = {
  /** The attempt that just ended, 1-based. */
  attempt: number;
  method: string;
  /** The call carries an Idempotency-Key: the service answers its repetition with the first answer. */
  keyed: boolean;
  outcome: Outcome;
  /** Milliseconds since the first attempt started. */
  elapsedMs: number;
  now: number;
  policy: RetryPolicy;
  random: () => number;
};

export type RetryDecision = { retry: false; reason: string } | { retry: true; delayMs: number; reason: string };

/**
 * Retry on 429 (refused before any work, docs/adr/0023-rate-limits.md), on 503 (a dependency is
 * away), on 409 with Retry-After (`idempotency_in_flight`: the first call with the key still runs)
 * for keyed calls, and on a lost answer only where repeating is safe: an idempotent method or a
 * keyed POST. A 502 or 504 is a proxy's word that it lost the service's answer (a replica gone
 * mid-request, a time-out), so it counts as a lost answer: the service may have acted. The wait is the answer's Retry-After when it gives one, else the back-off; the
 * retries end at `maxAttempts` or when the next attempt would start after `maxElapsedMs`.
 */
export function decideRetry(input: RetryInput): RetryDecision {
  const { attempt, method, keyed, outcome, elapsedMs, now, policy, random } = input;
  const safe = IDEMPOTENT.has(method.toUpperCase()) || keyed;
  let reason: string;
  let retryAfterMs: number | undefined;
  if ('networkError' in outcome) {
    if (!safe) return { retry: false, reason: `no answer to ${method}, which is neither idempotent nor keyed` };
    reason = 'no answer';
  } else if (outcome.status === 502 || outcome.status === 504) {
    if (!safe) return { retry: false, reason: `answer ${outcome.status} to ${method}, which is neither idempotent nor keyed` };
    reason = `answer ${outcome.status}`;
    retryAfterMs = parseRetryAfter(outcome.retryAfter, now);
  } else if (outcome.status === 429 || outcome.status === 503 || (outcome.status === 409 && keyed && outcome.retryAfter)) {
    reason = `answer ${outcome.status}`;
    retryAfterMs = parseRetryAfter(outcome.retryAfter, now);
  } else {
    return { retry: false, reason: `answer ${outcome.status} is final` };
  }
  if (attempt >= policy.maxAttempts) return { retry: false, reason: `${reason} after ${attempt} attempts` };
  const delayMs = retryAfterMs ?? backoffDelay(attempt, policy, random);
  if (elapsedMs + delayMs > policy.maxElapsedMs) return { retry: false, reason: `${reason}; waiting ${delayMs} ms would pass ${policy.maxElapsedMs} ms` };
  return { retry: true, delayMs, reason };
}
