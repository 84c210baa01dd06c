import type { Knex } from 'knex';
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
  type OperationHandler,
} from '@platform/shared';
import type { Principal } from '../domain/principal.ts';
import { knexSql } from '../store/db.ts';
import { deferredSql } from '../store/deferred.ts';
import { inTenant, type TenantRunner, type TenantWork } from '../store/tenant-scope.ts';

/** A POST handler: it does its work through `run`, in the transaction that also keeps its key. */
export type PostHandler = (ctx: HandlerContext<Principal>, run: TenantRunner) => Promise<HandlerResult>;

export type IdempotencyOptions = { db: Knex; retentionDays: number; waitMs: number };

/**
 * Idempotency-Key of docs/adr/0010-idempotency-key.md around a POST handler. The key is claimed, the work done and the
 * response stored in one database transaction: a crash anywhere before commit leaves neither the
 * effect nor the key, and a retry runs afresh; after commit, every retry gets the stored answer.
 * A request that finds the key held by one still running waits up to `waitMs` for it, then 409.
 */
export function idempotent(options: IdempotencyOptions, handler: PostHandler): OperationHandler<Principal> {
  return async (ctx) => {
    const tenantId = ctx.principal.tenantId;
    const key = ctx.headers['idempotency-key'];
    if (typeof key !== 'string') return handler(ctx, (work) => inTenant(options.db, tenantId, work));
    const scope = idempotencyScope(tenantId, ctx.req.method, ctx.req.path, key);
    const hash = requestHash(ctx.body, ctx.query);
    const claimAndRun: TenantWork<HandlerResult> = async (trx, tenant) => {
      const claim = await claimKey(knexSql(trx), scope, hash, options.retentionDays);
      if (!claim.claimed) return replay(claim, hash);
      const { stored, sent } = recorded(await handler(ctx, (work) => work(trx, tenant)));
      // The stored response leaves with the COMMIT (store/deferred.ts).
      await storeResponse(deferredSql(trx), scope, stored);
      return sent;
    };
    try {
      return await inTenant(options.db, tenantId, claimAndRun, { lockTimeoutMs: options.waitMs });
    } catch (error) {
      if (error instanceof KeyInFlight) throw keyInFlightProblem();
      throw error;
    }
  };
}
