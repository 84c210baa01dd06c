import { ProblemError } from '@platform/shared';
import { InvalidExpression, NotFound, UnknownValue } from '../domain/errors.ts';

/** The one place where the data service's errors become problem+json. */
export function dataProblem(error: unknown): ProblemError | undefined {
  if (error instanceof UnknownValue) {
    return new ProblemError(422, 'validation_failed', error.message, { errors: [{ loc: error.loc, msg: error.msg, type: 'value' }] });
  }
  if (error instanceof InvalidExpression) {
    return new ProblemError(400, 'invalid_query', error.message, { position: error.position, errors: [{ loc: error.loc, msg: error.message, type: 'expression' }] });
  }
  if (error instanceof NotFound) return new ProblemError(404, 'not_found', error.message);
  return undefined;
}
