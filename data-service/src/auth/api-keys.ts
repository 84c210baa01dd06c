// Who is calling: X-Api-Key checked against the tenant's API key digests in the management database.
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type pg from 'pg';
import { forbidden, unauthenticated, type RevocationCache, type TenantRevocations } from '@platform/shared';
import { Outage } from '../domain/outage.ts';

/** An analyst's request, proven by an API key of the tenant named in X-TENANT-ID. */
export type DataPrincipal = { tenantId: string; apiKeyId: string };

/** Whether the tenant exists and is enabled, and the ids of its revoked API keys, in one read. */
export async function readApiKeyRevocations(pool: pg.Pool, tenantId: string): Promise<TenantRevocations> {
  const { rows } = await pool.query<{ active: boolean; revoked: string[] }>(
    `select t.disabled_at is null as active,
            array(select k.id from api_keys k where k.tenant_id = t.id and k.revoked_at is not null) as revoked
       from tenants t where t.id = $1`,
    [tenantId],
  );
  const row = rows[0];
  return row ? { active: row.active, revoked: new Set(row.revoked) } : { active: false, revoked: new Set() };
}

/**
 * Reads a tenant's revocations through `outage`: while Postgres does not answer and the replica is
 * degraded, the state last read for the tenant (a key known revoked stays refused); a tenant never
 * read is refused with 503 (docs/adr/0025-data-service-degraded.md).
 */
export function revocationsThroughOutage(read: (tenantId: string) => Promise<TenantRevocations>, outage: Outage) {
  const lastRead = new Map<string, TenantRevocations>();
  return (tenantId: string): Promise<TenantRevocations> =>
    outage.read(
      async () => {
        const state = await read(tenantId);
        if (!lastRead.has(tenantId) && lastRead.size >= 10_000) lastRead.clear();
        lastRead.set(tenantId, state);
        return state;
      },
      () => lastRead.get(tenantId),
    );
}

/**
 * Checks `X-Api-Key` against the SHA-256 digests of the API keys (the management database is
 * the source of truth). A key of another tenant than `X-TENANT-ID` is a 403. What a digest names
 * is cached for `cacheMs`; whether that key is still unrevoked and its tenant enabled comes from
 * `revocations` (read once per tenant and TOKEN_REVOCATION_CHECK_MS), so a revoked key stops
 * within that bound however long the lookup is cached. While Postgres does not answer and `outage`
 * says degraded, a lookup whose cache time has run out is used as it was (a key never looked up is
 * a 503, never accepted unverified).
 */
export function createApiKeyVerifier(pool: pg.Pool, cacheMs: number, revocations: RevocationCache, outage: Outage = new Outage(0, Date.now)) {
  const cache = new Map<string, { key: { id: string; tenantId: string } | null; until: number }>();

  const keyOf = async (apiKey: string): Promise<{ id: string; tenantId: string } | null> => {
    const digest = createHash('sha256').update(apiKey).digest();
    const cacheKey = digest.toString('hex');
    const cached = cache.get(cacheKey);
    if (cached && cached.until > Date.now()) return cached.key;
    const looked = await outage.read(
      async () => {
        const { rows } = await pool.query<{ id: string; tenant_id: string }>(
          `select k.id, k.tenant_id from api_keys k join tenants t on t.id = k.tenant_id
            where k.key_hash = $1 and k.revoked_at is null and t.disabled_at is null`,
          [digest],
        );
        return { key: rows[0] ? { id: rows[0].id, tenantId: rows[0].tenant_id } : null, fresh: true };
      },
      // The lookup as it was: not cached anew, so it is asked again on the next request.
      () => (cached ? { key: cached.key, fresh: false } : undefined),
    );
    if (!looked.fresh) return looked.key;
    const key = looked.key;
    if (cache.size > 10_000) cache.clear();
    cache.set(cacheKey, { key, until: Date.now() + cacheMs });
    return key;
  };

  return {
    tenantId: async (req: Request): Promise<string> => {
      const tenant = req.get('x-tenant-id');
      if (!tenant) throw unauthenticated('Send the header X-TENANT-ID with your tenant id.');
      return tenant;
    },
    apiKey: async (req: Request): Promise<DataPrincipal> => {
      const apiKey = req.get('x-api-key');
      const tenant = req.get('x-tenant-id');
      if (!apiKey) throw unauthenticated('Send the header X-Api-Key with an API key of your tenant.');
      const key = await keyOf(apiKey);
      if (key === null) throw unauthenticated('Unknown or revoked API key.');
      const state = await revocations.get(key.tenantId);
      if (!state.active || state.revoked.has(key.id)) throw unauthenticated('Unknown or revoked API key.');
      if (tenant !== undefined && key.tenantId !== tenant) throw forbidden('This API key does not belong to the tenant named in X-TENANT-ID.');
      return { tenantId: key.tenantId, apiKeyId: key.id };
    },
  };
}
