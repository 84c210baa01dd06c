import type { NextFunction, Request, Response } from 'express';
import { newUlid } from '../ids.ts';
import { accessLog, type Logger } from '../logger.ts';
import type { HttpMetrics } from '../metrics.ts';
import { SpanKind, traceFields, type Tracing } from '../tracing.ts';
import { RequestState } from './request-state.ts';

const REQUEST_ID = /^[\x21-\x7E]{1,128}$/;

/**
 * The first middleware: a request's id (the client's X-Request-Id when it is printable, else a new
 * one), its state, its span, and once it is over its access line, duration metric and span end.
 */
export function requestScope(options: { logger: Logger; tracing?: Tracing; metrics?: HttpMetrics }) {
  const { logger, tracing, metrics } = options;
  const log = accessLog(logger);
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : newUlid();
    const trace = tracing?.start('http request', req.headers.traceparent as string | undefined, SpanKind.SERVER);
    const state = new RequestState(requestId, process.hrtime.bigint(), trace, logger);
    res.locals.request = state;
    res.setHeader('X-Request-Id', requestId);
    // 'close' comes once the answer is out, or when the client left before it (the response then never ended).
    res.once('close', () => {
      const ids = { request_id: requestId, ...(trace ? traceFields(trace.span) : {}), tenant: state.tenant };
      const durationMs = state.elapsedMs();
      if (!res.writableEnded) {
        state.abort();
        trace?.span.end();
        log({
          message: 'request closed by the client before its answer',
          method: req.method,
          path: req.path,
          operation: state.operationId,
          duration_ms: durationMs,
          ...ids,
        });
        return;
      }
      log({ message: 'request', method: req.method, path: req.path, operation: state.operationId, status: res.statusCode, duration_ms: durationMs, ...ids });
      metrics?.observe(state.operationId ?? 'unmatched', res.statusCode, durationMs / 1000, state.roundTrips?.count ?? 0);
      if (trace) {
        trace.span.updateName(state.operationId ?? 'unmatched');
        trace.span.setAttributes({ 'http.request.method': req.method, 'http.response.status_code': res.statusCode });
        trace.span.end();
      }
    });
    next();
  };
}
