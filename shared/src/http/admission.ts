import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, type Registry } from 'prom-client';
import { ProblemError, problemBody } from '../problem.ts';
import { AdmissionLimit, type AdmissionLimitSettings } from './admission-limit.ts';
import { requestState } from './request-state.ts';

/** Seconds a shed request's client waits before it tries again (Retry-After). */
export const SHED_RETRY_AFTER_SECONDS = 1;
/** How often the event loop's delay and the database wait are sampled and the limit adjusted. */
export const ADMISSION_SAMPLE_MS = 50;
/** Paths never shed: the load balancer's and the orchestrator's checks (the metrics port is a listener of its own). */
const EXEMPT = new Set(['/livez', '/readyz']);

export type AdmissionOptions = {
  /** OVERLOAD_EVENT_LOOP_DELAY_MS. */
  eventLoopDelayTargetMs: number;
  /** OVERLOAD_DB_WAIT_MS, with `dbWaitMs`: the longest wait for a database connection since the last call (a pool's sampler). */
  dbWaitTargetMs?: number;
  dbWaitMs?: () => number;
  registry?: Registry;
  /** Limits on the limit; the defaults suit both services. */
  limits?: Partial<Pick<AdmissionLimitSettings, 'minLimit' | 'maxLimit' | 'initialLimit' | 'decreaseHoldMs'>>;
};

/**
 * Admission control of a service's interface (docs/adr/0062-overload-shedding.md): an express
 * middleware placed before routing, authentication and body parsing that sheds a request with 503
 * `unavailable` and Retry-After when the adaptive limit of requests in flight is reached, and the
 * timer that samples the event loop's delay (its own lag) and the database wait to adjust that
 * limit. `stop` ends the timer.
 */
export type Admission = { middleware: (req: Request, res: Response, next: NextFunction) => void; limit: AdmissionLimit; stop: () => void };

export function startAdmission(options: AdmissionOptions): Admission {
  const limit = new AdmissionLimit({
    eventLoopDelayTargetMs: options.eventLoopDelayTargetMs,
    dbWaitTargetMs: options.dbWaitMs ? options.dbWaitTargetMs : undefined,
    minLimit: 16,
    // No count is assumed: the first overload takes the limit to 0.9 × the requests then in flight.
    maxLimit: 1000,
    initialLimit: 1000,
    decreaseHoldMs: 4 * ADMISSION_SAMPLE_MS,
    ...options.limits,
  });
  const metrics = options.registry ? admissionMetrics(options.registry, limit) : undefined;
  // The event loop's delay is this timer's own lag: how much later than asked its callback ran.
  let expected = performance.now() + ADMISSION_SAMPLE_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    limit.sample({ eventLoopDelayMs: Math.max(0, now - expected), dbWaitMs: options.dbWaitMs?.() }, now);
    expected = now + ADMISSION_SAMPLE_MS;
  }, ADMISSION_SAMPLE_MS);
  timer.unref();

  const middleware = (req: Request, res: Response, next: NextFunction): void => {
    if (EXEMPT.has(req.path)) return next();
    const shed = limit.admit();
    if (shed === undefined) {
      res.once('close', () => limit.release());
      return next();
    }
    metrics?.shed.inc({ reason: shed });
    const state = requestState(res);
    state.operationId = 'shed';
    const problem = new ProblemError(503, 'unavailable', `The service is over its capacity; retry in ${SHED_RETRY_AFTER_SECONDS} second.`);
    // Written without express's send: a shed answer costs as little as it can.
    const body = JSON.stringify(problemBody(problem, state.requestId));
    res
      .writeHead(503, {
        'Content-Type': 'application/problem+json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        'Retry-After': String(SHED_RETRY_AFTER_SECONDS),
      })
      .end(body);
  };
  return { middleware, limit, stop: () => clearInterval(timer) };
}

/** Shed requests by reason, and the limit, the requests in flight and the decayed signals when scraped (docs/adr/0024-observability.md). */
function admissionMetrics(registry: Registry, limit: AdmissionLimit) {
  const shed = new Counter({
    name: 'http_requests_shed_total',
    help: 'Requests answered 503 at once because the adaptive limit of requests in flight was reached, by the signal that lowered it (event_loop, database)',
    labelNames: ['reason'],
    registers: [registry],
  });
  new Gauge({
    name: 'http_admission_limit',
    help: 'The adaptive limit of requests in flight above which requests are shed',
    registers: [registry],
    collect() {
      this.set(limit.limit);
    },
  });
  new Gauge({
    name: 'http_admission_in_flight',
    help: 'Requests admitted and not yet answered',
    registers: [registry],
    collect() {
      this.set(limit.inFlight);
    },
  });
  new Gauge({
    name: 'http_admission_signal_ms',
    help: 'The decayed signals the limit follows: the event loop delay and the wait for a database connection, in milliseconds',
    labelNames: ['signal'],
    registers: [registry],
    collect() {
      this.set({ signal: 'event_loop' }, limit.signals.eventLoopDelayMs);
      this.set({ signal: 'database' }, limit.signals.dbWaitMs);
    },
  });
  return { shed };
}
