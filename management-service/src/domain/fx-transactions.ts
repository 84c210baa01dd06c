import { changedPaths } from './customer-rights.ts';
import { BookedByService, type Loc } from './errors.ts';
import type { Doc } from './merge.ts';

/**
 * What a client may do with FX transactions (docs/adr/0022-execution-and-withdrawals.md), pure. An FX transaction is
 * the record of a conversion that moved two cash positions at once; only the service's execution knows both sides and
 * books it, with its `conversion`. A client's FX would be a conversion without its other side, and a client's change
 * of a booked one would leave its `conversion` disagreeing with the holdings it moved.
 */

const FX = 'FX';
const TYPE: Loc = ['body', 'type'];
const TARGET: Loc = ['path', 'transaction_id'];
/** The client's own reference to the transaction: changing it moves no money. */
const CLIENTS_FIELDS = new Set(['external_id']);

/** A transaction the service booked from a conversion it made. */
const isBooked = (doc: Doc): boolean => doc.conversion !== undefined && doc.conversion !== null;

const noFx = 'may not be FX: conversions are booked by the service when it executes orders in another currency, with their conversion';

/** A client's new transaction: never FX. */
export function checkClientCreate(body: Doc): void {
  if (body.type === FX) throw new BookedByService([TYPE], noFx);
}

/**
 * A client's change of a transaction, `after` being the result of its patch: a booked conversion may change its
 * `external_id` only; any other transaction may not become, or stay, FX (one made before this rule may be retyped
 * or deleted).
 */
export function checkClientUpdate(before: Doc, after: Doc): void {
  if (isBooked(before)) {
    const fields = new Set(changedPaths(before, after).map((path) => path[0]!));
    const refused = [...fields].filter((field) => !CLIENTS_FIELDS.has(field)).map((field): Loc => ['body', field]);
    if (refused.length > 0) throw new BookedByService(refused, 'is part of a conversion the service booked; only external_id may change');
    return;
  }
  if (after.type === FX) throw new BookedByService([TYPE], noFx);
}

/** A client's delete: never of a booked conversion (the holdings it moved would lose their record). */
export function checkClientDelete(current: Doc): void {
  if (isBooked(current)) throw new BookedByService([TARGET], 'names a conversion the service booked; it cannot be deleted');
}
