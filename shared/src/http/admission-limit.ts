/**
 * The adaptive limit on requests in flight that sheds a service's excess load
 * (docs/adr/0062-overload-shedding.md). Pure: the clock and the measurements are given to it.
 *
 * - A request is admitted while fewer than `limit` are in flight, otherwise shed at once.
 * - Every sample (each `sampleMs`) gives the event loop's delay and, where there is a database pool,
 *   the longest wait for one of its connections. Each signal is held at its peak and decays by half
 *   per sample, so it rises at once and falls within a few samples of the overload ending.
 * - When a decayed signal is over its target while requests queue (at least 2 × minLimit were in
 *   flight since the last sample), the limit falls to 0.9 × the requests that were in flight, at
 *   most once per `decreaseHoldMs` so that the last decrease can take effect first. A late event
 *   loop with hardly a request in flight (a start, a collection of garbage) is not the requests'
 *   doing, and lowering their limit would only shed the next burst.
 * - When both are under their targets, the limit grows by its square root each sample (additive
 *   increase): from the floor back to the ceiling within about 3 s of calm, so that a limit lowered
 *   by one overload does not shed the bursts of normal work long after it. It stays within
 *   [minLimit, maxLimit].
 */

export type ShedReason = 'event_loop' | 'database';

export type AdmissionLimitSettings = {
  /** The event loop's delay (ms) above which the limit falls (OVERLOAD_EVENT_LOOP_DELAY_MS). */
  eventLoopDelayTargetMs: number;
  /** The wait for a database connection (ms) above which the limit falls (OVERLOAD_DB_WAIT_MS); undefined: no database signal. */
  dbWaitTargetMs?: number;
  minLimit: number;
  maxLimit: number;
  initialLimit: number;
  /** The shortest time between two decreases. */
  decreaseHoldMs: number;
};

/** One sample of the signals: the event loop's delay since the last one, and the longest wait for a database connection. */
export type AdmissionSignals = { eventLoopDelayMs: number; dbWaitMs?: number };

export const DECREASE_FACTOR = 0.9;
const DECAY = 0.5;

export class AdmissionLimit {
  inFlight = 0;
  limit: number;
  /** Why requests are shed when the limit is reached: the signal that last lowered it. */
  reason: ShedReason = 'event_loop';
  #eventLoopDelayMs = 0;
  #dbWaitMs = 0;
  #peakInFlight = 0;
  #lastDecreaseAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly settings: AdmissionLimitSettings) {
    if (settings.minLimit < 1 || settings.minLimit > settings.maxLimit) throw new RangeError('minLimit must be within 1..maxLimit');
    this.limit = clamp(settings.initialLimit, settings.minLimit, settings.maxLimit);
  }

  /** Admits a request (counting it in flight until `release`), or says why it is shed. */
  admit(): ShedReason | undefined {
    if (this.inFlight >= this.limit) return this.reason;
    this.inFlight++;
    if (this.inFlight > this.#peakInFlight) this.#peakInFlight = this.inFlight;
    return undefined;
  }

  /** An admitted request is over. */
  release(): void {
    if (this.inFlight > 0) this.inFlight--;
  }

  /** The decayed signals the last sample left, for metrics and tests. */
  get signals(): { eventLoopDelayMs: number; dbWaitMs: number } {
    return { eventLoopDelayMs: this.#eventLoopDelayMs, dbWaitMs: this.#dbWaitMs };
  }

  /** Takes one sample of the signals at `now` (ms) and adjusts the limit. */
  sample(signals: AdmissionSignals, now: number): void {
    const { settings } = this;
    this.#eventLoopDelayMs = Math.max(signals.eventLoopDelayMs, this.#eventLoopDelayMs * DECAY);
    this.#dbWaitMs = Math.max(signals.dbWaitMs ?? 0, this.#dbWaitMs * DECAY);
    // Each signal as a share of its target: over 1 is over target.
    const loopLoad = this.#eventLoopDelayMs / settings.eventLoopDelayTargetMs;
    const dbLoad = settings.dbWaitTargetMs === undefined ? 0 : this.#dbWaitMs / settings.dbWaitTargetMs;
    const peak = Math.max(this.#peakInFlight, this.inFlight);
    this.#peakInFlight = this.inFlight;
    if (loopLoad > 1 || dbLoad > 1) {
      this.reason = dbLoad > loopLoad ? 'database' : 'event_loop';
      if (peak < 2 * settings.minLimit || now - this.#lastDecreaseAt < settings.decreaseHoldMs) return;
      this.#lastDecreaseAt = now;
      this.limit = clamp(Math.floor(Math.min(this.limit, peak) * DECREASE_FACTOR), settings.minLimit, settings.maxLimit);
      return;
    }
    this.limit = clamp(this.limit + Math.max(1, Math.floor(Math.sqrt(this.limit))), settings.minLimit, settings.maxLimit);
  }
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
