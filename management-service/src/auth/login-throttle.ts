import { ProblemError, rateLimitKey, type RateLimitStore } from '@platform/shared';
import { loginBlockSeconds, type LoginThrottleSettings } from '../domain/rate-limits.ts';

/**
 * Slows guessing of secrets on POST /auth/login/ (docs/adr/0023-rate-limits.md): failed logins are
 * counted per access key id and client address together, and per client address, in the shared
 * rate_limits table, so every replica sees the same counts; past the free ones each failure blocks
 * further logins of that key from that address (or every login from that address) for a short,
 * growing time. An access key id is no secret, so failures from other addresses never block the
 * key where it has not failed. A successful login resets its key and address's count; right logins
 * never count.
 */
export type LoginThrottle = {
  /** Throws the 429 while the key from this address, or the address, is blocked (the secret is not even checked). */
  refuseWhileBlocked: (accessKeyId: string, address: string) => Promise<void>;
  failed: (accessKeyId: string, address: string) => Promise<void>;
  succeeded: (accessKeyId: string, address: string) => Promise<void>;
};

// Failures are counted up to this many in a window: far beyond any block's growth.
const COUNT_CEILING = 1_000_000;

export function createLoginThrottle(store: RateLimitStore, settings: LoginThrottleSettings): LoginThrottle {
  const failures = store.counter('login-fail', COUNT_CEILING, settings.failureWindowSeconds);
  const blocks = store.counter('login-block', 1, settings.maxBlockSeconds);
  // The id a client sends may hold ':' (an address may too): escaped, no id and address can spell another pair's key.
  const pairOf = (accessKeyId: string, address: string) => rateLimitKey('ak-addr', encodeURIComponent(accessKeyId), address);
  const addressOf = (address: string) => rateLimitKey('addr', address);
  const policy = `${settings.pairFailuresFree};w=${settings.failureWindowSeconds}`;

  return {
    refuseWhileBlocked: async (accessKeyId, address) => {
      const states = await Promise.all([blocks.get(pairOf(accessKeyId, address)), blocks.get(addressOf(address))]);
      const waitMs = Math.max(0, ...states.map((res) => (res && res.consumedPoints > 1 ? res.msBeforeNext : 0)));
      if (waitMs <= 0) return;
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new ProblemError(429, 'rate_limited', `Too many failed logins; retry after ${seconds} seconds.`, {
        headers: {
          'Retry-After': String(seconds),
          'RateLimit-Policy': policy,
          RateLimit: `limit=${settings.pairFailuresFree}, remaining=0, reset=${seconds}`,
        },
      });
    },
    failed: async (accessKeyId, address) => {
      const pair = pairOf(accessKeyId, address);
      const [byPair, byAddress] = await Promise.all([failures.consume(pair), failures.consume(addressOf(address))]);
      const pairBlock = loginBlockSeconds(byPair.consumedPoints, settings.pairFailuresFree, settings);
      const addressBlock = loginBlockSeconds(byAddress.consumedPoints, settings.addressFailuresFree, settings);
      await Promise.all([
        pairBlock > 0 ? blocks.block(pair, pairBlock) : undefined,
        addressBlock > 0 ? blocks.block(addressOf(address), addressBlock) : undefined,
      ]);
    },
    // The address's count stays: a guesser must not clear it by logging in with a key of its own.
    succeeded: async (accessKeyId, address) => {
      await failures.delete(pairOf(accessKeyId, address));
    },
  };
}
