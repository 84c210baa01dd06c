/**
 * Typed errors of the data service's rules; http/problems.ts turns them into problem+json in one
 * place. `loc` points into the request (`['body', 'fields', 2]`, `['query', 'universe']`).
 */
export type Loc = (string | number)[];

export class DataError extends Error {}

/** A field name the contract's pattern allows but the service does not know: 422 `unknown_field`. */
export class UnknownValue extends DataError {
  constructor(
    readonly loc: Loc,
    readonly msg: string,
  ) {
    super(`${loc.join('.')} ${msg}`);
  }
}

/** A filter expression that does not parse or type-check: 400 `invalid_filter` with the character position. */
export class InvalidExpression extends DataError {
  constructor(
    readonly loc: Loc,
    readonly position: number,
    message: string,
    /** The expression, quoted in the problem's detail. */
    readonly source?: string,
  ) {
    super(message);
  }
}

/** A request the schema accepts but the contract's rules refuse (a sort field not listed, say): 422 `validation_failed`. */
export class InvalidValue extends DataError {
  constructor(
    readonly loc: Loc,
    readonly msg: string,
  ) {
    super(`${loc.join('.')} ${msg}`);
  }
}

/** No such resource of this tenant (an inspiration definition, a universe, a currency's rates): 404, `loc` naming the parameter when one does. */
export class NotFound extends DataError {
  constructor(
    message: string,
    readonly loc?: Loc,
  ) {
    super(message);
  }
}

/** The resource's kind forbids the operation (changing a platform inspiration): 409 `state_conflict`. */
export class StateConflict extends DataError {}

/**
 * The tenant already has as many future performance simulations waiting as the service allows
 * (SIMULATION_QUEUE_PER_TENANT): 429 `rate_limited` with Retry-After; nothing runs.
 */
export class TooManyWaiting extends DataError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}
