import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type pg from 'pg';
import { forbidden, unauthenticated } from '@platform/shared';

/** An analyst's request, proven by an API key of the tenant named in X-TENANT-ID. */
export type DataPrincipal = { tenantId: string };

/**
 * Checks `X-Api-Key` against the SHA-256 digests of the API keys (the management database is
 * the source of truth). A key of another tenant than `X-TENANT-ID` is a 403. Answers are cached
 * for `cacheMs`, so a revoked key stops working within that time.
 */
export function createApiKeyVerifier(pool: pg.Pool, cacheMs: number) {
  const cache = new Map<string, { tenantId: string | null; until: number }>();

  const tenantOfKey = async (apiKey: string): Promise<string | null> => {
    const digest = createHash('sha256').update(apiKey).digest();
    const cacheKey = digest.toString('hex');
    const cached = cache.get(cacheKey);
    if (cached && cached.until > Date.now()) return cached.tenantId;
    const { rows } = await pool.query<{ tenant_id: string }>(
      `select k.tenant_id from api_keys k join tenants t on t.id = k.tenant_id
        where k.key_hash = $1 and k.revoked_at is null and t.disabled_at is null`,
      [digest],
    );
    const tenantId = rows[0]?.tenant_id ?? null;
    if (cache.size > 10_000) cache.clear();
    cache.set(cacheKey, { tenantId, until: Date.now() + cacheMs });
    return tenantId;
  };

  return {
    tenantId: async (req: Request): Promise<string> => {
      const tenant = req.get('x-tenant-id');
      if (!tenant) throw unauthenticated('Send the header X-TENANT-ID with your tenant id.');
      return tenant;
    },
    apiKey: async (req: Request): Promise<DataPrincipal> => {
      const key = req.get('x-api-key');
      const tenant = req.get('x-tenant-id');
      if (!key) throw unauthenticated('Send the header X-Api-Key with an API key of your tenant.');
      const keyTenant = await tenantOfKey(key);
      if (keyTenant === null) throw unauthenticated('Unknown or revoked API key.');
      if (tenant !== undefined && keyTenant !== tenant) throw forbidden('This API key does not belong to the tenant named in X-TENANT-ID.');
      return { tenantId: keyTenant };
    },
  };
}
