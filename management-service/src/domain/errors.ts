/**
 * Typed domain errors. Domain and store code throw these; http/problems.ts turns them into
 * problem+json in one place.
 */
export type Loc = (string | number)[];

export class DomainError extends Error {}

/** No such entity in this tenant (also: wrong type letter, another tenant's id). */
export class EntityNotFound extends DomainError {
  constructor(readonly label: string) {
    super(`No such ${label}.`);
  }
}

export class NotPermitted extends DomainError {}

/** A customer's change touches fields that are the machine client's or the service's. */
export class FieldsNotPermitted extends NotPermitted {
  constructor(readonly locs: Loc[]) {
    super(`A customer may not change ${locs.map((l) => l.slice(1).join('.')).join(', ')}: the tenant's machine client changes these.`);
  }
}

/** A value that must be unique per tenant is taken. */
export class DuplicateValue extends DomainError {
  constructor(
    readonly field: string,
    readonly loc: Loc = ['body', field],
  ) {
    super(`${field} is already used by another entity of this tenant.`);
  }
}

/** A write-once field would change. */
export class WriteOnceField extends DomainError {
  constructor(readonly loc: Loc) {
    super(`${loc.join('.')} is write-once and cannot change.`);
  }
}

/** The body is valid against the contract but breaks a rule; `loc` points into the body. */
export class InvalidField extends DomainError {
  constructor(
    readonly loc: Loc,
    readonly msg: string,
  ) {
    super(`${loc.join('.')} ${msg}`);
  }
}

export class StateConflict extends DomainError {}

/** A client's write of what only the service books (an FX transaction and its conversion); `locs` name what was refused. */
export class BookedByService extends DomainError {
  constructor(
    readonly locs: Loc[],
    readonly msg: string,
  ) {
    super(`${locs.map((l) => l.join('.')).join(', ')} ${msg}.`);
  }
}

/** A query parameter (paging, embed) that names something impossible; `loc` points to it. */
export class InvalidParameter extends DomainError {
  constructor(
    readonly loc: Loc,
    message: string,
  ) {
    super(`${loc[1]} ${message}`);
  }
}

export class VersionMismatch extends DomainError {
  constructor(readonly current: number) {
    super(`If-Match does not name the current version (${current}).`);
  }
}

/** None of the representations the operation offers is acceptable (Accept). */
export class NotAcceptable extends DomainError {}

/** A service the answer needs did not answer in time, or not at all; asking again later may work. */
export class DependencyUnavailable extends DomainError {}
