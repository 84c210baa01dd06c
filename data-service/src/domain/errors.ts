/**
 * Typed errors of the data service's rules; http/problems.ts turns them into problem+json in one
 * place. `loc` points into the request (`['body', 'fields', 2]`, `['query', 'universe']`).
 */
export type Loc = (string | number)[];

export class DataError extends Error {}

/** A value the contract allows but the data does not know (an unknown field or universe): 422. */
export class UnknownValue extends DataError {
  constructor(
    readonly loc: Loc,
    readonly msg: string,
  ) {
    super(`${loc.join('.')} ${msg}`);
  }
}

/** A filter or query expression that does not parse or type-check: 400 with the character position. */
export class InvalidExpression extends DataError {
  constructor(
    readonly loc: Loc,
    readonly position: number,
    message: string,
  ) {
    super(message);
  }
}

/** No such resource of this tenant (an inspiration definition, say): 404. */
export class NotFound extends DataError {}
