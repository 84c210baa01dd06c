import { perWindow, rateLimitKey, type RateLimit } from '@platform/shared';

/**
 * Which budget a request of the data interface counts against (docs/adr/0023-rate-limits.md):
 * its API key's, keyed within its tenant, so one tenant's use never spends another's. Pure.
 */

/** A tenant's own limits (tenants.rate_limits, set by the CLI), in requests per minute. */
export type TenantRateLimits = { requests_per_minute?: number };

export function dataRateLimits(
  settings: { windowSeconds: number; apiKey: number },
  principal: { tenantId: string; apiKeyId: string } | undefined,
  tenant: TenantRateLimits,
): RateLimit[] {
  if (!principal) return [];
  const { windowSeconds } = settings;
  const own = tenant.requests_per_minute;
  const points = own !== undefined ? perWindow(own, windowSeconds) : settings.apiKey;
  return points > 0 ? [{ key: rateLimitKey('api', principal.tenantId, principal.apiKeyId), points, windowSeconds }] : [];
}
