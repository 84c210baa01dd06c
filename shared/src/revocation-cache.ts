/**
 * What a replica needs to know about a tenant before it trusts a credential it has already
 * verified (a signed access token, a cached API key): whether the tenant is still enabled and
 * which credential ids have been revoked since.
 */
export type TenantRevocations = { active: boolean; revoked: ReadonlySet<string> };

export type RevocationCache = { get: (tenantId: string) => Promise<TenantRevocations> };

/**
 * Keeps each tenant's revocations for at most `checkMs` after the read that produced them
 * started, so a revocation committed at time t is seen by every request that starts after
 * t + checkMs, on every replica, with one read per tenant and period instead of one per request.
 * Requests that find the entry stale share one read (a read older than `checkMs` is not shared:
 * it could have started before the revocation). A failed read is not remembered.
 */
export function createRevocationCache(options: {
  read: (tenantId: string) => Promise<TenantRevocations>;
  checkMs: number;
  now?: () => number;
  maxTenants?: number;
}): RevocationCache {
  const now = options.now ?? Date.now;
  const maxTenants = options.maxTenants ?? 10_000;
  const entries = new Map<string, { readAt: number; state: Promise<TenantRevocations> }>();

  return {
    get: (tenantId) => {
      const at = now();
      const entry = entries.get(tenantId);
      if (entry && at < entry.readAt + options.checkMs) return entry.state;
      const state = options.read(tenantId);
      // A flood of made-up tenant ids (OIDC claims) must not grow the map without end.
      if (!entry && entries.size >= maxTenants) entries.clear();
      const fresh = { readAt: at, state };
      entries.set(tenantId, fresh);
      state.catch(() => {
        if (entries.get(tenantId) === fresh) entries.delete(tenantId);
      });
      return state;
    },
  };
}
