import { isUnavailable } from '@platform/shared';

/**
 * Whether this replica may answer from what it cached while Postgres does not answer
 * (docs/adr/0025-data-service-degraded.md):
 * - `unknown`: Postgres has not answered since the replica started, so it has nothing verified to serve;
 * - `ok`: the last read answered;
 * - `degraded`: reads fail as unavailable since `since`, for at most `maxMs`: cached answers are served;
 * - `expired`: degraded for longer than `maxMs`: refused like `unknown`, stale data is not served for ever.
 */
export type OutageMode = 'unknown' | 'ok' | 'degraded' | 'expired';

/** A change of mode, told once per transition (not per request), for the log. */
export type OutageChange = { to: 'degraded' } | { to: 'expired'; afterMs: number } | { to: 'ok'; afterMs: number };

/**
 * The replica's view of Postgres, fed by the outcome of its reads. Pure: the clock is given, and a
 * transition is reported through `onChange` (the caller logs it).
 */
export class Outage {
  private reached = false;
  private since: number | undefined;
  private lastFailure = 0;
  private expiredTold = false;

  constructor(
    /** 0: never serve cached data while Postgres does not answer. */
    private readonly maxMs: number,
    private readonly now: () => number,
    private readonly onChange: (change: OutageChange) => void = () => undefined,
    /**
     * While degraded, how long after a failed read the next reads answer from the cache without
     * asking Postgres: a server that does not answer costs a connection time-out, and requests
     * would otherwise each wait that long (several times: key, revocations, tenant data).
     */
    private readonly probeMs = 1000,
  ) {}

  /** A read of Postgres answered. */
  reachable(): void {
    this.reached = true;
    if (this.since === undefined) return;
    const afterMs = this.now() - this.since;
    this.since = undefined;
    this.expiredTold = false;
    this.onChange({ to: 'ok', afterMs });
  }

  /** A read of Postgres failed because it does not answer (not because of what was asked). */
  unreachable(): void {
    this.lastFailure = this.now();
    if (!this.reached || this.since !== undefined) return;
    this.since = this.lastFailure;
    this.onChange({ to: 'degraded' });
  }

  mode(): OutageMode {
    if (!this.reached) return 'unknown';
    if (this.since === undefined) return 'ok';
    const afterMs = this.now() - this.since;
    if (afterMs < this.maxMs) return 'degraded';
    if (!this.expiredTold) {
      this.expiredTold = true;
      this.onChange({ to: 'expired', afterMs });
    }
    return 'expired';
  }

  /**
   * Runs a Postgres read and records its outcome. When it fails because Postgres does not answer
   * and the replica is degraded (not expired), answers `cached()` instead, unless that is
   * undefined (nothing verified to serve); otherwise the read's error is thrown (a 503). Within
   * `probeMs` of a failed read, a degraded replica answers `cached()` without reading.
   */
  async read<T>(read: () => Promise<T>, cached: () => T | undefined): Promise<T> {
    if (this.mode() === 'degraded' && this.now() - this.lastFailure < this.probeMs) {
      const fallback = cached();
      if (fallback !== undefined) return fallback;
    }
    let value: T;
    try {
      value = await read();
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      this.unreachable();
      const fallback = this.mode() === 'degraded' ? cached() : undefined;
      if (fallback === undefined) throw error;
      return fallback;
    }
    this.reachable();
    return value;
  }
}
