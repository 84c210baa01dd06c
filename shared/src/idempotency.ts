import { createHash } from 'node:crypto';
import type { HandlerResult } from './http/app-options.ts';
import { ProblemError } from './problem.ts';

/**
 * Idempotency-Key (docs/adr/0010-idempotency-key.md), shared by both services: keys live in Postgres
 * (`idempotency_keys`, shared/migrations/006_idempotency_keys.sql) and are claimed in the transaction of the
 * request's effect, so a key exists exactly when its effect does.
 */

/** Runs one statement in the caller's transaction; `$1`, `$2`, … each used once, in order. */
export type Sql = (text: string, values: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

export type IdempotencyScope = { tenantId: string; method: string; path: string; key: string };

/** The response as sent: status, headers of its own and the exact body text. */
export type StoredResponse = { status: number; headers: Record<string, string>; body: string };

export type Claim = { claimed: true } | { claimed: false; requestHash: string; response: StoredResponse };

/** The first request with the key still runs after the wait (Postgres lock_timeout). */
export class KeyInFlight extends Error {}

/** JSON with object keys sorted, so that the same body always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the canonical body and query: a retry must send the same request. */
export const requestHash = (body: unknown, query: unknown) =>
  createHash('sha256')
    .update(canonical({ body: body ?? null, query }))
    .digest('hex');

/** The key's scope: tenant, method, and the path without its trailing slash (both forms are one route). */
export const idempotencyScope = (tenantId: string, method: string, path: string, key: string): IdempotencyScope => ({
  tenantId,
  method,
  path: path.replace(/\/+$/, ''),
  key,
});

/**
 * Claims the key in the caller's transaction, or returns what is stored for it. A concurrent
 * holder of the key (an uncommitted claim) makes the insert wait (as long as the transaction's
 * lock_timeout allows; the claim itself lifts that timeout for the work that follows): when the
 * holder commits, the stored response comes back; when it rolls back, the claim is ours. An
 * expired row is removed and the key claimed anew. Unique constraint, not read-then-write: two
 * requests can never both claim, and replays take no lock.
 */
export async function claimKey(sql: Sql, scope: IdempotencyScope, hash: string, retentionDays: number): Promise<Claim> {
  const key = [scope.tenantId, scope.method, scope.path, scope.key];
  for (;;) {
    let rows: unknown[];
    try {
      ({ rows } = await sql(
        `insert into idempotency_keys (tenant_id, method, path, key, request_hash, expires_at)
         values ($1, $2, $3, $4, $5, now() + make_interval(days => $6))
         on conflict do nothing returning set_config('lock_timeout', '0', true)`,
        [...key, hash, retentionDays],
      ));
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') throw new KeyInFlight();
      throw error;
    }
    if (rows.length > 0) return { claimed: true };
    const [stored] = (
      await sql(
        `select request_hash, response_status, response_headers, response_body, expires_at < now() as expired
           from idempotency_keys where tenant_id = $1 and method = $2 and path = $3 and key = $4`,
        key,
      )
    ).rows;
    if (stored && !stored.expired) {
      return {
        claimed: false,
        requestHash: String(stored.request_hash),
        response: {
          status: Number(stored.response_status),
          headers: (stored.response_headers ?? {}) as Record<string, string>,
          body: String(stored.response_body),
        },
      };
    }
    // Gone meanwhile, or past its retention and not yet removed by the expiry job: claim it anew.
    await sql(`delete from idempotency_keys where tenant_id = $1 and method = $2 and path = $3 and key = $4 and expires_at < now()`, key);
  }
}

/** Completes the claim with the response, in the transaction of the effect. */
export async function storeResponse(sql: Sql, scope: IdempotencyScope, response: StoredResponse): Promise<void> {
  await sql(
    `update idempotency_keys set response_status = $1, response_headers = $2, response_body = $3
      where tenant_id = $4 and method = $5 and path = $6 and key = $7`,
    [response.status, JSON.stringify(response.headers), response.body, scope.tenantId, scope.method, scope.path, scope.key],
  );
}

/** Same key, another body: 422. */
export const keyReusedProblem = () =>
  new ProblemError(422, 'idempotency_key_reused', 'This Idempotency-Key was used with a different request body; use a new key for a new request.', {
    errors: [{ loc: ['header', 'Idempotency-Key'], msg: 'was used with a different body', type: 'idempotency' }],
  });

/** Same key while the first request still runs: 409 with Retry-After. */
export const keyInFlightProblem = () =>
  new ProblemError(409, 'idempotency_in_flight', 'A request with this Idempotency-Key is still being processed; retry after a moment.', {
    headers: { 'Retry-After': '1' },
  });

/** The stored answer of a claim that found one, marked as a replay (or 422 for another body). */
export function replay(claim: Extract<Claim, { claimed: false }>, hash: string): HandlerResult {
  if (claim.requestHash !== hash) throw keyReusedProblem();
  const { status, headers, body } = claim.response;
  return { status, headers: { ...headers, 'Idempotency-Replayed': 'true' }, body: Buffer.from(body), contentType: 'application/json' };
}

/** A handler's result as it is stored for replay and sent (the same bytes both times). */
export function recorded(result: HandlerResult): { stored: StoredResponse; sent: HandlerResult } {
  const body = JSON.stringify(result.body ?? null);
  return {
    stored: { status: result.status, headers: result.headers ?? {}, body },
    sent: { ...result, body: Buffer.from(body), contentType: 'application/json' },
  };
}
