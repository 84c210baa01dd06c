import { ProblemError, unavailableProblem } from '@platform/shared';
import { InvalidExpression, InvalidValue, NotFound, StateConflict, TooManyWaiting, UnknownValue } from '../domain/errors.ts';

/** The one place where the data service's errors become problem+json. */
export function dataProblem(error: unknown): ProblemError | undefined {
  if (error instanceof UnknownValue) {
    return new ProblemError(422, 'unknown_field', error.message, { errors: [{ loc: error.loc, msg: error.msg, type: 'unknown_field' }] });
  }
  if (error instanceof InvalidValue) {
    return new ProblemError(422, 'validation_failed', error.message, { errors: [{ loc: error.loc, msg: error.msg, type: 'value' }] });
  }
  if (error instanceof InvalidExpression) {
    const msg = `${error.message} at position ${error.position}`;
    return new ProblemError(400, 'invalid_filter', `${error.loc.slice(1).join('.')}: ${msg}${error.source === undefined ? '' : ` in '${error.source}'`}`, {
      position: error.position,
      errors: [{ loc: error.loc, msg, type: 'invalid_filter' }],
    });
  }
  if (error instanceof NotFound)
    return new ProblemError(404, 'not_found', error.message, error.loc ? { errors: [{ loc: error.loc, msg: error.message, type: 'not_found' }] } : undefined);
  if (error instanceof StateConflict) return new ProblemError(409, 'state_conflict', error.message);
  if (error instanceof TooManyWaiting)
    return new ProblemError(429, 'rate_limited', error.message, { headers: { 'Retry-After': String(error.retryAfterSeconds) } });
  return unavailableProblem(error);
}
