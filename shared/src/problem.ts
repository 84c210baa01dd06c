import type { components } from '@platform/api-types/management';

/** The stable machine codes of problem+json errors; the enum lives in the contracts. */
export type ErrorCode = components['schemas']['ErrorCode'];
export type ValidationIssue = { loc: (string | number)[]; msg: string; type: string };

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

/**
 * An error that the HTTP layer turns into an application/problem+json answer. Domain code throws
 * its own typed errors; each service maps them to a ProblemError in one place.
 */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: { errors?: ValidationIssue[]; headers?: Record<string, string>; [key: string]: unknown } = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
  }
}

export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  errors?: ValidationIssue[];
  [key: string]: unknown;
};

/** The RFC 9457 body for a ProblemError; `type` is a stable URI naming the code. */
export function problemBody(error: ProblemError, requestId: string): ProblemBody {
  const { headers: _headers, ...extra } = error.extra;
  return {
    type: `urn:problem:${error.code}`,
    title: TITLES[error.status] ?? 'Error',
    status: error.status,
    detail: error.detail,
    code: error.code,
    request_id: requestId,
    ...extra,
  };
}

export const unauthenticated = (detail: string) => new ProblemError(401, 'unauthenticated', detail);
export const forbidden = (detail: string) => new ProblemError(403, 'forbidden', detail);
