import { ProblemError, rateLimitKey, type RateLimitStore } from '@platform/shared';
import { loginBlockSeconds, type LoginThrottleSettings } from '../domain/rate-limits.ts';

/**
 * Slows guessing of secrets on POST /auth/login/ (docs/adr/0023-rate-limits.md): failed logins are
 * counted per access key id and per client address in the shared rate_limits table, every replica
 * sees the same counts; past the free ones each failure blocks further logins of that key (or from
 * that address) for a short, growing time. A successful login resets its key's count. Right
 * logins never count.
 */
export type LoginThrottle = {
  /** Throws the 429 while the key or the address is blocked (the secret is not even checked). */
  refuseWhileBlocked: (accessKeyId: string, address: string) => Promise<void>;
  failed: (accessKeyId: string, address: string) => Promise<void>;
  succeeded: (accessKeyId: string) => Promise<void>;
};

// Failures are counted up to this many in a window: far beyond any block's growth.
const COUNT_CEILING = 1_000_000;

export function createLoginThrottle(store: RateLimitStore, settings: LoginThrottleSettings): LoginThrottle {
  const failures = store.counter('login-fail', COUNT_CEILING, settings.failureWindowSeconds);
  const blocks = store.counter('login-block', 1, settings.maxBlockSeconds);
  const keyOf = (accessKeyId: string) => rateLimitKey('ak', accessKeyId);
  const addressOf = (address: string) => rateLimitKey('addr', address);
  const policy = `${settings.keyFailuresFree};w=${settings.failureWindowSeconds}`;

  return {
    refuseWhileBlocked: async (accessKeyId, address) => {
      const states = await Promise.all([blocks.get(keyOf(accessKeyId)), blocks.get(addressOf(address))]);
      const waitMs = Math.max(0, ...states.map((res) => (res && res.consumedPoints > 1 ? res.msBeforeNext : 0)));
      if (waitMs <= 0) return;
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new ProblemError(429, 'rate_limited', `Too many failed logins; retry after ${seconds} seconds.`, {
        headers: {
          'Retry-After': String(seconds),
          'RateLimit-Policy': policy,
          RateLimit: `limit=${settings.keyFailuresFree}, remaining=0, reset=${seconds}`,
        },
      });
    },
    failed: async (accessKeyId, address) => {
      const [byKey, byAddress] = await Promise.all([failures.consume(keyOf(accessKeyId)), failures.consume(addressOf(address))]);
      const keyBlock = loginBlockSeconds(byKey.consumedPoints, settings.keyFailuresFree, settings);
      const addressBlock = loginBlockSeconds(byAddress.consumedPoints, settings.addressFailuresFree, settings);
      await Promise.all([
        keyBlock > 0 ? blocks.block(keyOf(accessKeyId), keyBlock) : undefined,
        addressBlock > 0 ? blocks.block(addressOf(address), addressBlock) : undefined,
      ]);
    },
    succeeded: async (accessKeyId) => {
      await failures.delete(keyOf(accessKeyId));
    },
  };
}
