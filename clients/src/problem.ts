import type { components } from '@platform/api-types/management';

/** The stable error codes of both contracts (`ErrorCode`; a unit test of the services keeps both enums equal). */
export type ErrorCode = components['schemas']['ErrorCode'];
/** One violation of a 422 `validation_failed` (or 400 `invalid_parameter`): where, what, which rule. */
export type ValidationIssue = components['schemas']['ValidationError'];
export type ProblemBody = components['schemas']['Problem'] & { position?: number };

const POSITION = /at position (\d+)/;

/**
 * An `application/problem+json` answer of either service as an exception: `status`, `code` (narrow
 * with `problem.is('not_found')` or `isProblem(error, 'not_found')`), `title`, `detail`,
 * `requestId` (quote it when reporting), `errors` (each violation's `loc`) and `field` (the first
 * one's), and for `invalid_query` the 0-based `position` in the query text.
 */
export class ApiProblem<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'ApiProblem';
  readonly status: number;
  readonly code: C;
  readonly title: string;
  readonly detail: string | undefined;
  readonly requestId: string;
  readonly errors: ValidationIssue[];
  /** Where in the query expression an `invalid_query` is, when the service names it. */
  readonly position: number | undefined;
  /** The field of the first violation, as a dotted path without its part (`config.manager` of `["body","config","manager"]`). */
  readonly field: string | undefined;
  /** The request that got the answer, e.g. `GET /portfolios/`. */
  readonly operation: string;

  constructor(
    readonly body: ProblemBody,
    operation: string,
  ) {
    super(`${operation}: ${body.status} ${body.code}${body.detail ? `: ${body.detail}` : ''} (request ${body.request_id})`);
    this.status = body.status;
    this.code = body.code as C;
    this.title = body.title;
    this.detail = body.detail;
    this.requestId = body.request_id;
    this.errors = body.errors ?? [];
    this.position = typeof body.position === 'number' ? body.position : positionIn(body.detail);
    this.field = this.errors[0]?.loc.slice(1).join('.') || undefined;
    this.operation = operation;
  }

  /** Narrows the problem to one code: `if (problem.is('version_mismatch')) …`. */
  is<K extends ErrorCode>(code: K): this is ApiProblem<K> {
    return (this.code as ErrorCode) === code;
  }
}

/** True when `error` is an ApiProblem, of `code` when given. */
export function isProblem<K extends ErrorCode = ErrorCode>(error: unknown, code?: K): error is ApiProblem<K> {
  return error instanceof ApiProblem && (code === undefined || error.code === code);
}

const positionIn = (detail: string | undefined): number | undefined => {
  const match = detail === undefined ? null : POSITION.exec(detail);
  return match ? Number(match[1]) : undefined;
};

const isProblemBody = (value: unknown): value is ProblemBody => {
  const body = value as Partial<ProblemBody> | null;
  return typeof body === 'object' && body !== null && typeof body.status === 'number' && typeof body.code === 'string' && typeof body.title === 'string';
};

/** The exception for a failed answer whose body was already read: an ApiProblem when it is one. */
export function failureOf(body: unknown, status: number, operation: string): ApiProblem | UnexpectedResponse {
  return isProblemBody(body)
    ? new ApiProblem(body, operation)
    : new UnexpectedResponse(status, operation, typeof body === 'string' ? body : JSON.stringify(body ?? ''));
}

/** The problem an answer carries, or undefined when it is a success or not problem+json. */
export async function problemOf(response: Response, method: string): Promise<ApiProblem | undefined> {
  if (response.ok) return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('application/problem+json')) return undefined;
  let body: unknown;
  try {
    body = await response.clone().json();
  } catch {
    return undefined;
  }
  return isProblemBody(body) ? new ApiProblem(body, `${method} ${new URL(response.url || 'http://unknown/').pathname}`) : undefined;
}

/** A failed answer that is not problem+json (a proxy's HTML page, an empty 502): its status and the start of its text. */
export class UnexpectedResponse extends Error {
  override readonly name = 'UnexpectedResponse';
  constructor(
    readonly status: number,
    readonly operation: string,
    readonly text: string,
  ) {
    super(`${operation}: ${status} without a problem+json body: ${text.slice(0, 200)}`);
  }
}
