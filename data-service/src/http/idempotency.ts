import type pg from 'pg';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  KeyInFlight,
  claimKey,
  idempotencyScope,
  keyInFlightProblem,
  recorded,
  replay,
  requestHash,
  storeResponse,
  type HandlerContext,
  type HandlerResult,
  type Sql,
} from '@platform/shared';
import type { DataPrincipal } from '../auth/api-keys.ts';
import type { TenantCache } from '../tenant-data/cache.ts';

export type IdempotencyOptions = { retentionDays: number; waitMs: number };

/** A change of the tenant's data: in Postgres (its count), then in this replica's cache. */
export type CountedChange = { postgres: (client: pg.PoolClient) => Promise<number>; local: (conn: DuckDBConnection) => Promise<unknown> };

const pgSql =
  (client: pg.PoolClient): Sql =>
  async (text, values) =>
    client.query(text, values);

/**
 * Writes of tenant data with the Idempotency-Key of docs/adr/0010-idempotency-key.md: the key is claimed, the change
 * made and the answer stored in the one Postgres transaction of the write (the same store as the
 * management service's keys). A replay answers the stored response and changes nothing.
 */
export function keyedWrites(tenants: TenantCache, options: IdempotencyOptions) {
  return async (ctx: HandlerContext<DataPrincipal>, change: CountedChange, respond: (count: number) => HandlerResult): Promise<HandlerResult> => {
    const tenantId = ctx.principal.tenantId;
    const key = ctx.headers['idempotency-key'];
    if (typeof key !== 'string') return respond(await tenants.write(tenantId, { postgres: change.postgres, changed: (n) => n > 0, local: change.local }));
    const scope = idempotencyScope(tenantId, ctx.req.method, ctx.req.path, key);
    const hash = requestHash(ctx.body, ctx.query);
    type Outcome = { replayed: HandlerResult } | { sent: HandlerResult };
    try {
      const outcome = await tenants.write<Outcome>(tenantId, {
        postgres: async (client) => {
          const sql = pgSql(client);
          // The keys' row-level security names the tenant; the wait for a key held by a running request is bounded.
          await sql(`select set_config('app.tenant_id', $1, true), set_config('lock_timeout', $2, true)`, [tenantId, `${options.waitMs}ms`]);
          const claim = await claimKey(sql, scope, hash, options.retentionDays);
          if (!claim.claimed) return { replayed: replay(claim, hash) };
          const { stored, sent } = recorded(respond(await change.postgres(client)));
          await storeResponse(sql, scope, stored);
          return { sent };
        },
        // A replay rolls back: nothing changed, no version spent.
        changed: (o) => 'sent' in o,
        local: async (conn, o) => ('sent' in o ? change.local(conn) : undefined),
      });
      return 'replayed' in outcome ? outcome.replayed : outcome.sent;
    } catch (error) {
      if (error instanceof KeyInFlight) throw keyInFlightProblem();
      throw error;
    }
  };
}
