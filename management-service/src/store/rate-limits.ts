import type { Knex } from 'knex';
import type { TenantRateLimits } from '../domain/rate-limits.ts';

/** A tenant's own rate limits (tenants.rate_limits, shared migration 011); none for an unknown tenant. */
export async function readTenantRateLimits(db: Knex, tenantId: string): Promise<TenantRateLimits> {
  const row = (await db('tenants').select('rate_limits').where({ id: tenantId }).first()) as { rate_limits: TenantRateLimits } | undefined;
  return row?.rate_limits ?? {};
}

/**
 * Sets (a number) or removes (null: the service's default again) each given limit of a tenant;
 * answers the tenant's limits after the change, or undefined for an unknown tenant.
 */
export async function updateTenantRateLimits(db: Knex, tenantId: string, changes: Record<string, number | null>): Promise<TenantRateLimits | undefined> {
  const set = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== null));
  const removed = Object.keys(changes).filter((k) => changes[k] === null);
  const { rows } = await db.raw(`update tenants set rate_limits = (rate_limits - ?::text[]) || ?::jsonb where id = ? returning rate_limits`, [
    removed,
    JSON.stringify(set),
    tenantId,
  ]);
  return (rows as { rate_limits: TenantRateLimits }[])[0]?.rate_limits;
}
