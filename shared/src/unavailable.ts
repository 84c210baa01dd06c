import { ProblemError } from './problem.ts';

/** How long a client waits before retrying a request the database could not serve. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Socket errors of a database host or port that does not answer. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away or cannot take the connection: class 08 (connection
 * exception), 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now (starting up or
 * shutting down), 53300 too many connections.
 */
const isUnavailableSqlState = (code: string) => /^08[0-9A-Z]{3}$/.test(code) || ['57P01', '57P02', '57P03', '53300'].includes(code);

/** node-postgres and knex say these without a code: a connection that died, a pool that gave up waiting. */
const MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /Timeout acquiring a connection/,
  /Client has encountered a connection error/,
];

/**
 * The same messages of node-postgres after the statement knex puts in front of them
 * (`BEGIN; - Connection terminated unexpectedly`, `ROLLBACK - …`, `select … - …`), as the whole
 * end of the message: a value in the statement cannot make a request's own error look like one.
 */
const AFTER_STATEMENT =
  / - (Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|timeout exceeded when trying to connect)$/;

/** Whether an error says that the database could not be reached or went away, rather than that the request was wrong. */
export function isUnavailable(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, name, message, errors } = error as { code?: unknown; name?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || isUnavailableSqlState(code))) return true;
  if (name === 'KnexTimeoutError') return true;
  if (typeof message === 'string' && (MESSAGES.some((m) => m.test(message)) || AFTER_STATEMENT.test(message))) return true;
  // Connecting to a name with several addresses fails with one error per address.
  return Array.isArray(errors) && errors.length > 0 && errors.every(isUnavailable);
}

/** A 503 `unavailable` with Retry-After for an error of an unreachable database, or undefined for any other error. */
export function unavailableProblem(error: unknown): ProblemError | undefined {
  if (!isUnavailable(error)) return undefined;
  return new ProblemError(503, 'unavailable', `The database does not answer; retry in ${UNAVAILABLE_RETRY_AFTER_SECONDS} seconds.`, {
    headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
  });
}
