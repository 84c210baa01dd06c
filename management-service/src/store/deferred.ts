import type { Knex } from 'knex';
import type { Sql } from '@platform/shared';
import { BatchingClient } from './batching-client.ts';

/** The connection of a transaction, when it is one of the service's batching connections. */
export async function batchingConnection(trx: Knex | Knex.Transaction): Promise<BatchingClient | undefined> {
  if (!(trx as Knex.Transaction).isTransaction) return undefined;
  // A transaction's client hands out its one connection.
  const connection = await (trx.client as { acquireConnection: () => Promise<unknown> }).acquireConnection();
  return connection instanceof BatchingClient ? connection : undefined;
}

/**
 * Runs a statement of the transaction whose answer nobody needs (an outbox row, a stored
 * response): on the service's connections it leaves with the transaction's next statement, at the
 * latest its COMMIT, instead of a round trip of its own (docs/adr/0031-http-hot-path.md). A failure
 * fails that statement, and so the transaction. Elsewhere it runs at once. `translate` says what a
 * failure means (a domain error, or undefined): the transaction then fails with that
 * (docs/adr/0063-deposit-round-trips.md).
 */
export async function deferred(trx: Knex.Transaction, query: Knex.QueryBuilder | Knex.Raw, translate?: (error: Error) => Error | undefined): Promise<void> {
  const connection = await batchingConnection(trx);
  if (!connection) {
    try {
      await query;
    } catch (error) {
      throw translate?.(error as Error) ?? error;
    }
    return;
  }
  const { sql, bindings } = query.toSQL().toNative();
  connection.ahead({ text: sql, values: bindings as unknown[], translate });
}

/** `Sql` of the shared stores whose statements are deferred (see deferred). */
export const deferredSql =
  (trx: Knex.Transaction): Sql =>
  async (text, values) => {
    await deferred(trx, trx.raw(text.replace(/\$\d+/g, '?'), values as Knex.RawBinding[]));
    return { rows: [] };
  };
