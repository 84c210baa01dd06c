import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { ProblemError, type HandlerContext, type HandlerResult, type OperationHandler } from '@platform/shared';
import type { Principal } from '../auth/principal.ts';
import { KeyInFlight, claimKey, storeResponse, type IdempotencyScope } from '../store/idempotency.ts';
import { inTenant, type TenantRunner, type TenantWork } from '../store/tenant-scope.ts';

/** A POST handler: it does its work through `run`, in the transaction that also keeps its key. */
export type PostHandler = (ctx: HandlerContext<Principal>, run: TenantRunner) => Promise<HandlerResult>;

export type IdempotencyOptions = { db: Knex; retentionDays: number; waitMs: number };

/** JSON with object keys sorted, so that the same body always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const requestHash = (body: unknown, query: unknown) => createHash('sha256').update(canonical({ body: body ?? null, query })).digest('hex');

const replayed = (status: number, headers: Record<string, string>, body: string): HandlerResult => ({
  status,
  headers: { ...headers, 'Idempotency-Replayed': 'true' },
  body: Buffer.from(body),
  contentType: 'application/json',
});

/**
 * Idempotency-Key of decisions §7 around a POST handler. The key is claimed, the work done and the
 * response stored in one database transaction: a crash anywhere before commit leaves neither the
 * effect nor the key, and a retry runs afresh; after commit, every retry gets the stored answer.
 * A request that finds the key held by one still running waits up to `waitMs` for it, then 409.
 */
export function idempotent(options: IdempotencyOptions, handler: PostHandler): OperationHandler<Principal> {
  return async (ctx) => {
    const tenantId = ctx.principal.tenantId;
    const key = ctx.headers['idempotency-key'];
    if (typeof key !== 'string') return handler(ctx, (work) => inTenant(options.db, tenantId, work));
    const scope: IdempotencyScope = { tenantId, method: ctx.req.method, path: ctx.req.path.replace(/\/+$/, ''), key };
    const hash = requestHash(ctx.body, ctx.query);
    const claimAndRun: TenantWork<HandlerResult> = async (trx, tenant) => {
      const claim = await claimKey(trx, scope, hash, options.retentionDays);
      if (!claim.claimed) {
        if (claim.requestHash !== hash) {
          throw new ProblemError(422, 'idempotency_key_reused', 'This Idempotency-Key was used with a different request body; use a new key for a new request.', {
            errors: [{ loc: ['header', 'Idempotency-Key'], msg: 'was used with a different body', type: 'idempotency' }],
          });
        }
        return replayed(claim.response.status, claim.response.headers, claim.response.body);
      }
      const result = await handler(ctx, (work) => work(trx, tenant));
      const body = JSON.stringify(result.body ?? null);
      await storeResponse(trx, scope, { status: result.status, headers: result.headers ?? {}, body });
      return { ...result, body: Buffer.from(body), contentType: 'application/json' };
    };
    try {
      return await inTenant(options.db, tenantId, claimAndRun, { lockTimeoutMs: options.waitMs });
    } catch (error) {
      if (!(error instanceof KeyInFlight)) throw error;
      throw new ProblemError(409, 'idempotency_in_flight', 'A request with this Idempotency-Key is still being processed; retry after a moment.', {
        headers: { 'Retry-After': '1' },
      });
    }
  };
}
