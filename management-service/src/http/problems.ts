import { ProblemError, unavailableProblem } from '@platform/shared';
import {
  BookedByService,
  DependencyUnavailable,
  DuplicateValue,
  InvalidParameter,
  EntityNotFound,
  FieldsNotPermitted,
  InvalidField,
  NotAcceptable,
  NotPermitted,
  StateConflict,
  VersionMismatch,
  WriteOnceField,
} from '../domain/errors.ts';
import { QueryError } from '../query/compile.ts';
import { QuerySyntaxError } from '../query/parser.ts';

/** The one place where the management service's domain errors become problem+json. */
export function domainProblem(error: unknown): ProblemError | undefined {
  if (error instanceof EntityNotFound) return new ProblemError(404, 'not_found', error.message);
  if (error instanceof FieldsNotPermitted) {
    return new ProblemError(403, 'forbidden', error.message, {
      errors: error.locs.map((loc) => ({ loc, msg: "is not the customer's to change", type: 'permission' })),
    });
  }
  if (error instanceof NotPermitted) return new ProblemError(403, 'forbidden', error.message);
  if (error instanceof DuplicateValue) {
    return new ProblemError(409, 'duplicate_value', error.message, { errors: [{ loc: error.loc, msg: 'is already used', type: 'unique' }] });
  }
  if (error instanceof WriteOnceField) {
    return new ProblemError(409, 'write_once_field', error.message, { errors: [{ loc: error.loc, msg: 'is write-once', type: 'write_once' }] });
  }
  if (error instanceof InvalidField) {
    return new ProblemError(422, 'validation_failed', error.message, { errors: [{ loc: error.loc, msg: error.msg, type: 'rule' }] });
  }
  if (error instanceof BookedByService) {
    return new ProblemError(422, 'booked_by_service', error.message, {
      errors: error.locs.map((loc) => ({ loc, msg: error.msg, type: 'booked_by_service' })),
    });
  }
  if (error instanceof InvalidParameter) {
    return new ProblemError(400, 'invalid_parameter', error.message, { errors: [{ loc: error.loc, msg: error.message, type: 'parameter' }] });
  }
  if (error instanceof QuerySyntaxError || error instanceof QueryError) {
    return new ProblemError(400, 'invalid_query', error.message, {
      position: error.position,
      errors: [{ loc: ['query', 'query'], msg: error.message, type: 'query' }],
    });
  }
  if (error instanceof StateConflict) return new ProblemError(409, 'state_conflict', error.message);
  if (error instanceof NotAcceptable) return new ProblemError(406, 'not_acceptable', error.message);
  if (error instanceof DependencyUnavailable) return new ProblemError(503, 'unavailable', error.message, { headers: { 'Retry-After': '5' } });
  if (error instanceof VersionMismatch) return new ProblemError(412, 'version_mismatch', error.message);
  return unavailableProblem(error);
}
