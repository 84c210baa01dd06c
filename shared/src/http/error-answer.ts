import type { NextFunction, Request, Response } from 'express';
import { ProblemError, problemBody } from '../problem.ts';
import { requestState } from './request-state.ts';

/** The last middleware: any error a request ended with, answered as problem+json. */
export function errorAnswer(mapError?: (error: unknown) => ProblemError | undefined) {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const state = requestState(res);
    // Work stopped because its client left: nobody is there to answer, and nothing failed.
    if (state.isAbortReason(error)) return;
    const problem = toProblem(error, mapError);
    if (problem.code === 'internal_error') {
      state.log.error('request failed', { error: error instanceof Error ? error.stack : String(error) });
    } else if (problem.code === 'unavailable') {
      state.log.warn('not ready', { detail: problem.detail, error: error instanceof ProblemError ? undefined : String(error) });
    }
    if (res.headersSent) return res.end();
    res.status(problem.status).set(problem.extra.headers ?? {});
    res.type('application/problem+json').send(JSON.stringify(problemBody(problem, state.requestId)));
  };
}

/** The one place where an error becomes a problem: anything unknown is a 500 without details. */
function toProblem(error: unknown, mapError?: (error: unknown) => ProblemError | undefined): ProblemError {
  if (error instanceof ProblemError) return error;
  const mapped = mapError?.(error);
  if (mapped) return mapped;
  const { type, status, code, encoding } = (error ?? {}) as { type?: string; status?: number; code?: string; encoding?: string };
  if (type === 'entity.too.large') return new ProblemError(413, 'payload_too_large', 'The request body is larger than the limit.');
  if (type === 'request.aborted') return new ProblemError(400, 'malformed_json', 'The request body was not received completely.');
  if (type === 'request.size.invalid') return new ProblemError(400, 'malformed_json', 'The request body is not as long as its Content-Length says.');
  if (type === 'encoding.unsupported') {
    return new ProblemError(
      415,
      'unsupported_media_type',
      `Content-Encoding ${encoding ?? ''} is not supported: send the body as it is, or compressed with gzip, deflate, br or zstd.`,
    );
  }
  // The body parser marks a failed decompression 400 and leaves zlib's code on it (ZSTD_error_… for zstd).
  if (status === 400 && typeof code === 'string' && /^(Z_|ERR_|ZSTD_)/.test(code)) {
    return new ProblemError(400, 'malformed_json', 'The request body does not decompress as its Content-Encoding says.');
  }
  return new ProblemError(500, 'internal_error', 'An unexpected error occurred; the request_id identifies it in the logs.');
}
