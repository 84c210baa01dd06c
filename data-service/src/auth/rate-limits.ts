import type pg from 'pg';
import type { TenantRateLimits } from '../domain/rate-limits.ts';

/** A tenant's own rate limits (tenants.rate_limits, shared migration 011); none for an unknown tenant. */
export async function readTenantRateLimits(pool: pg.Pool, tenantId: string): Promise<TenantRateLimits> {
  const { rows } = await pool.query<{ rate_limits: TenantRateLimits }>('select rate_limits from tenants where id = $1', [tenantId]);
  return rows[0]?.rate_limits ?? {};
}
