import { perWindow, rateLimitKey, type RateLimit } from '@platform/shared';
import type { Principal } from './principal.ts';

/**
 * Which budgets a request of the management interface counts against (docs/adr/0023-rate-limits.md).
 * Pure: the settings, the tenant's own limits and the caller are given.
 */

/** The service's defaults (RATE_LIMIT_* settings): requests per window, 0 for no limit. */
export type RateLimitSettings = { windowSeconds: number; accessKey: number; user: number; address: number };

/** A tenant's own limits (tenants.rate_limits, set by the CLI), in requests per minute. */
export type TenantRateLimits = { requests_per_minute?: number; user_requests_per_minute?: number };

/** The operations that issue tokens: limited per client address too, whoever calls. */
export const TOKEN_OPERATIONS: ReadonlySet<string> = new Set(['login', 'refreshToken', 'createUserToken']);

/**
 * The limits of one request: its credential's (the access key of a machine client, the user of an
 * end-user token, each keyed within its tenant, so one tenant's use never spends another's budget)
 * and, on the token operations, its client address's. Open operations other than those (the JWKS)
 * and health checks count against nothing.
 */
export function managementRateLimits(
  settings: RateLimitSettings,
  request: { operationId: string; principal: Principal | undefined; address: string },
  tenant: TenantRateLimits,
): RateLimit[] {
  const { windowSeconds } = settings;
  const limits: RateLimit[] = [];
  const { principal } = request;
  if (principal) {
    const machine = principal.kind === 'machine';
    const own = machine ? tenant.requests_per_minute : tenant.user_requests_per_minute;
    const points = own !== undefined ? perWindow(own, windowSeconds) : machine ? settings.accessKey : settings.user;
    if (points > 0) limits.push({ key: rateLimitKey(machine ? 'ak' : 'u', principal.tenantId, principal.subject), points, windowSeconds });
  }
  if (TOKEN_OPERATIONS.has(request.operationId) && settings.address > 0) {
    limits.push({ key: rateLimitKey('addr', request.address), points: settings.address, windowSeconds });
  }
  return limits;
}

/** How failed logins are slowed (LOGIN_* settings). */
export type LoginThrottleSettings = {
  /** Consecutive failures of one access key id from one client address answered without a block. */
  pairFailuresFree: number;
  /** Failures from one address within the window answered without a block. */
  addressFailuresFree: number;
  blockSeconds: number;
  maxBlockSeconds: number;
  failureWindowSeconds: number;
};

/**
 * The block after the `failures`-th failure when `free` are answered at once: none up to `free`,
 * then `blockSeconds`, doubled with every further failure up to `maxBlockSeconds`. Short and
 * growing: a guesser gets a handful of tries a minute, the rightful client waits seconds.
 */
export function loginBlockSeconds(failures: number, free: number, settings: Pick<LoginThrottleSettings, 'blockSeconds' | 'maxBlockSeconds'>): number {
  if (failures <= free) return 0;
  const doublings = Math.min(failures - free - 1, 30);
  return Math.min(settings.maxBlockSeconds, settings.blockSeconds * 2 ** doublings);
}
