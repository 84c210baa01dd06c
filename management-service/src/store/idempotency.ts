import type { Knex } from 'knex';

export type IdempotencyScope = { tenantId: string; method: string; path: string; key: string };

/** The response as sent: status, headers of its own and the exact body text. */
export type StoredResponse = { status: number; headers: Record<string, string>; body: string };

export type Claim = { claimed: true } | { claimed: false; requestHash: string; response: StoredResponse };

/** Thrown when the first request with the key still runs after the wait (Postgres lock_timeout). */
export class KeyInFlight extends Error {}

/**
 * Claims the key in the caller's transaction, or returns what is stored for it. The transaction
 * starts with a lock timeout of `waitMs` (inTenant's option); a claim ends it, so the work that
 * follows waits for its locks as usual. A concurrent holder of the key (an uncommitted claim)
 * makes the insert wait, at most that long: when the holder
 * commits, the stored response comes back; when it rolls back, the claim is ours. An expired row
 * is removed and the key claimed anew. Unique constraint, not read-then-write: two requests can
 * never both claim, and replays take no lock.
 */
export async function claimKey(trx: Knex.Transaction, scope: IdempotencyScope, requestHash: string, retentionDays: number): Promise<Claim> {
  const where = { tenant_id: scope.tenantId, method: scope.method, path: scope.path, key: scope.key };
  for (;;) {
    let rows: unknown[];
    try {
      ({ rows } = await trx.raw(
        `insert into idempotency_keys (tenant_id, method, path, key, request_hash, expires_at)
         values (?, ?, ?, ?, ?, now() + make_interval(days => ?))
         on conflict do nothing returning set_config('lock_timeout', '0', true)`,
        [scope.tenantId, scope.method, scope.path, scope.key, requestHash, retentionDays],
      ));
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') throw new KeyInFlight();
      throw error;
    }
    if (rows.length > 0) return { claimed: true };
    const stored = await trx('idempotency_keys')
      .select('request_hash', 'response_status', 'response_headers', 'response_body', trx.raw('expires_at < now() as expired'))
      .where(where)
      .first();
    if (stored && !stored.expired) {
      return {
        claimed: false,
        requestHash: stored.request_hash,
        response: { status: stored.response_status, headers: stored.response_headers ?? {}, body: stored.response_body },
      };
    }
    // Gone meanwhile, or past its retention and not yet removed by the expiry job: claim it anew.
    await trx('idempotency_keys').where(where).where('expires_at', '<', trx.fn.now()).delete();
  }
}

/** Completes the claim with the response, in the transaction of the effect. */
export async function storeResponse(trx: Knex.Transaction, scope: IdempotencyScope, response: StoredResponse): Promise<void> {
  await trx('idempotency_keys')
    .where({ tenant_id: scope.tenantId, method: scope.method, path: scope.path, key: scope.key })
    .update({ response_status: response.status, response_headers: JSON.stringify(response.headers), response_body: response.body });
}

/** Removes keys past their retention (the expiry job). */
export async function deleteExpiredKeys(db: Knex): Promise<number> {
  return db('idempotency_keys').where('expires_at', '<', db.fn.now()).delete();
}
