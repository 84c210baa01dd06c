import { ROOT_CONTEXT, context, createContextKey, type Context } from '@opentelemetry/api';

/**
 * Database round trips of one request, counted by the store that makes them and reported with
 * the request's duration (docs/adr/0031-http-hot-path.md). The count rides on the request's
 * context (the one its span is active in), so work outside a request counts against nothing.
 */
export type RoundTrips = { count: number };

const KEY = createContextKey('platform.database-round-trips');

/** A context carrying a new counter, derived from `parent` (the request's span context). */
export function withRoundTrips(parent: Context | undefined): { context: Context; roundTrips: RoundTrips } {
  const roundTrips = { count: 0 };
  return { context: (parent ?? ROOT_CONTEXT).setValue(KEY, roundTrips), roundTrips };
}

/** Counts one round trip against the request whose context is active, if any. */
export function countRoundTrip(): void {
  const roundTrips = context.active().getValue(KEY) as RoundTrips | undefined;
  if (roundTrips) roundTrips.count++;
}
