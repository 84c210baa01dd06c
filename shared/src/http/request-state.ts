import type { Response } from 'express';
import type { Logger } from '../logger.ts';
import type { RoundTrips } from '../round-trips.ts';
import { traceFields, type Tracing } from '../tracing.ts';

/**
 * What the HTTP app keeps about one request while it runs (docs/adr/0031-http-hot-path.md). The
 * request's logger and its abort signal are made only when something asks for them: most requests
 * never log a line of their own, and the access log line is written without a logger.
 */
export class RequestState {
  operationId: string | undefined;
  tenant: string | undefined;
  roundTrips: RoundTrips | undefined;
  /** The client closed the connection before the answer was complete. */
  clientLeft = false;
  #log: Logger | undefined;
  #closed: AbortController | undefined;

  constructor(
    readonly requestId: string,
    readonly started: bigint,
    readonly trace: ReturnType<Tracing['start']> | undefined,
    private readonly logger: Logger,
  ) {}

  /** A logger whose lines carry request_id, the trace and, once authenticated, the tenant. */
  get log(): Logger {
    return (this.#log ??= this.logger.child({ request_id: this.requestId, ...(this.trace ? traceFields(this.trace.span) : {}), ...this.#tenantField() }));
  }

  /** Aborted when the client closes the connection before the answer is complete. */
  get signal(): AbortSignal {
    return (this.#closed ??= new AbortController()).signal;
  }

  setTenant(tenant: string): void {
    this.tenant = tenant;
    this.#log = undefined;
  }

  /** The client left: work given the signal stops. */
  abort(): void {
    this.clientLeft = true;
    this.#closed?.abort();
  }

  /** The error the signal's work rejects with after abort(), if it was aborted. */
  isAbortReason(error: unknown): boolean {
    return this.#closed !== undefined && this.#closed.signal.aborted && error === this.#closed.signal.reason;
  }

  elapsedMs(): number {
    return Number(process.hrtime.bigint() - this.started) / 1e6;
  }

  #tenantField(): { tenant?: string } {
    return this.tenant === undefined ? {} : { tenant: this.tenant };
  }
}

export const requestState = (res: Response): RequestState => res.locals.request as RequestState;
