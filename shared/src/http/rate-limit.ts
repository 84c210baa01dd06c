import { createHash } from 'node:crypto';
import { RLWrapperTimeouts, RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ProblemError } from '../problem.ts';

/**
 * Rate limits of both services (docs/adr/0023-rate-limits.md): each service says which limits a
 * request counts against; the counters live in Postgres (table rate_limits), so every replica
 * counts against one budget.
 */

/** One budget a request is counted against: `points` requests per `windowSeconds` under `key`. */
export type RateLimit = { key: string; points: number; windowSeconds: number };

/** Where a request stands against one limit after it was counted. */
export type RateLimitState = { limit: RateLimit; remaining: number; resetSeconds: number; refused: boolean };

/** The counters: one limiter of rate-limiter-flexible per prefix, budget and window, all in one table. */
export type RateLimitStore = { counter: (prefix: string, points: number, windowSeconds: number) => RateLimiterAbstract };

/** Which limits a request counts against; none for an operation that is not limited. */
export type RateLimitsFor<P> = (request: { operationId: string; principal: P | undefined; address: string }) => RateLimit[] | Promise<RateLimit[]>;

/** How long a counter waits for Postgres: while it answers, and once a counter went unanswered until one is answered again. */
export type CounterWaits = { answeringMs: number; awayMs: number };
export const DEFAULT_COUNTER_WAITS: CounterWaits = { answeringMs: 2_000, awayMs: 250 };

type Run = (this: RLWrapperTimeouts, funcName: string, params: unknown[]) => Promise<unknown>;

/**
 * A counter in Postgres whose wait depends on whether Postgres answers. A slow Postgres (a busy
 * pool, new connections) is waited for: were it given up after a short wait, each replica would
 * admit from its own memory counter a whole budget of its own, and a client landing on two
 * replicas would get twice its limit. Once a counter failed or went unanswered, Postgres counts
 * as away and the memory counter answers after the short wait, until a counter is answered again.
 */
class PostgresCounter extends RLWrapperTimeouts {
  private readonly postgres: { away: boolean };
  private readonly waits: CounterWaits;

  constructor(options: ConstructorParameters<typeof RLWrapperTimeouts>[0], postgres: { away: boolean }, waits: CounterWaits) {
    super(options);
    this.postgres = postgres;
    this.waits = waits;
  }

  // RLWrapperTimeouts runs every operation through _run (not in its typings), reading timeoutMs there.
  _run(funcName: string, params: unknown[]): Promise<unknown> {
    (this as unknown as { timeoutMs: number }).timeoutMs = this.postgres.away ? this.waits.awayMs : this.waits.answeringMs;
    const run = (RLWrapperTimeouts.prototype as unknown as { _run: Run })._run.call(this, funcName, params);
    // A refusal is an answer too; anything else (an error, the wait over) means Postgres is away.
    run.then(
      () => (this.postgres.away = false),
      (error) => (this.postgres.away = !(error instanceof RateLimiterRes)),
    );
    return run;
  }
}

/**
 * Counters in the rate_limits table (shared migration 011) through `client`, a knex instance or
 * a pg Pool, so that every replica counts against one budget. A counter waits for a Postgres that
 * answers (up to `waits.answeringMs`); one that fails or goes unanswered falls back to a
 * per-replica memory counter of the same budget, after `waits.awayMs` while Postgres stays away,
 * so the limits never turn a request into a 5xx nor make every request wait for a database that
 * is away. A key over its budget is refused from memory until its window ends, without another write.
 */
export function postgresRateLimitStore(client: unknown, storeType: 'knex' | 'pool', waits: CounterWaits = DEFAULT_COUNTER_WAITS): RateLimitStore {
  const limiters = new Map<string, RateLimiterAbstract>();
  const postgres = { away: false };
  return {
    counter: (prefix, points, windowSeconds) => {
      const id = `${prefix}|${points}|${windowSeconds}`;
      let limiter = limiters.get(id);
      if (!limiter) {
        const store = new RateLimiterPostgres({
          storeClient: client,
          storeType,
          tableName: 'rate_limits',
          tableCreated: true,
          // Expired rows are removed by the management service's nightly retention, in batches (docs/adr/0061-retention.md).
          clearExpiredByTimeout: false,
          keyPrefix: prefix,
          points,
          duration: windowSeconds,
          inMemoryBlockOnConsumed: points + 1,
        });
        limiter = new PostgresCounter(
          { limiter: store, insuranceLimiter: new RateLimiterMemory({ keyPrefix: prefix, points, duration: windowSeconds }) },
          postgres,
          waits,
        );
        limiters.set(id, limiter);
      }
      return limiter;
    },
  };
}

/**
 * A tenant's per-minute limit in a window of `windowSeconds` (at least one request): both services
 * read tenants.rate_limits in requests per minute and count in their own window.
 */
export function perWindow(perMinute: number, windowSeconds: number): number {
  return Math.max(1, Math.round((perMinute * windowSeconds) / 60));
}

/**
 * A counter key from its parts: the store's key column holds 255 characters, so a long part (an
 * access key id a client made up) is replaced by its digest.
 */
export function rateLimitKey(...parts: string[]): string {
  return parts.map((part) => (part.length > 64 ? createHash('sha256').update(part).digest('base64url') : part)).join(':');
}

/** Counts one request against every limit; a limit is refused when its budget is spent. */
export async function consumeLimits(store: RateLimitStore, limits: RateLimit[]): Promise<RateLimitState[]> {
  return Promise.all(
    limits.map(async (limit) => {
      const counter = store.counter('rl', limit.points, limit.windowSeconds);
      let res: RateLimiterRes;
      let refused = false;
      try {
        res = await counter.consume(limit.key, 1);
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) throw error;
        res = error;
        refused = true;
      }
      return { limit, remaining: res.remainingPoints, resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)), refused };
    }),
  );
}

/**
 * The headers of draft-ietf-httpapi-ratelimit-headers: every policy the request counted against,
 * and the state of the one closest to refusing (the fewest remaining, then the longest wait).
 */
export function rateLimitHeaders(states: RateLimitState[]): Record<string, string> {
  if (states.length === 0) return {};
  const policy = states.map(({ limit }) => `${limit.points};w=${limit.windowSeconds}`).join(', ');
  const closest = states.reduce((a, b) => (b.remaining < a.remaining || (b.remaining === a.remaining && b.resetSeconds > a.resetSeconds) ? b : a));
  return {
    'RateLimit-Policy': policy,
    RateLimit: `limit=${closest.limit.points}, remaining=${closest.remaining}, reset=${closest.resetSeconds}`,
  };
}

/** The 429 of a request over a limit, with Retry-After: the time until every refusing budget has room again. */
export function rateLimitedProblem(states: RateLimitState[], detail = 'Too many requests; retry after the number of seconds in Retry-After.'): ProblemError {
  const retryAfter = Math.max(1, ...states.filter((s) => s.refused).map((s) => s.resetSeconds));
  return new ProblemError(429, 'rate_limited', detail, { headers: { ...rateLimitHeaders(states), 'Retry-After': String(retryAfter) } });
}

/**
 * Counts the request against the limits the service names, and returns the headers that go on
 * its answer; throws the 429 when a limit refuses it (before any handler ran: nothing changes).
 */
export async function applyRateLimits<P>(
  options: { store: RateLimitStore; limitsFor: RateLimitsFor<P> },
  request: { operationId: string; principal: P | undefined; address: string },
): Promise<Record<string, string>> {
  const limits = await options.limitsFor(request);
  if (limits.length === 0) return {};
  const states = await consumeLimits(options.store, limits);
  if (states.some((s) => s.refused)) throw rateLimitedProblem(states);
  return rateLimitHeaders(states);
}

/**
 * Each key's value read at most once per `ttlMs` (a tenant's own limits): a change is seen by
 * every replica within that bound, without a read per request. A failed read is not kept.
 */
export function cachedPerKey<T>(read: (key: string) => Promise<T>, ttlMs: number, maxKeys = 10_000): (key: string) => Promise<T> {
  const entries = new Map<string, { until: number; value: Promise<T> }>();
  return (key) => {
    const now = Date.now();
    const hit = entries.get(key);
    if (hit && hit.until > now) return hit.value;
    if (!hit && entries.size >= maxKeys) entries.clear();
    const value = read(key);
    const entry = { until: now + ttlMs, value };
    entries.set(key, entry);
    value.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return value;
  };
}
