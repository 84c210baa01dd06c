import { renewAt } from '@platform/client';

/** What the console reads of an access token (it never verifies one: the services do). Pure. */
export type TokenClaims = { sub?: string; tenant_id?: string; kind?: string; exp?: number };

export function tokenClaims(token: string): TokenClaims {
  const payload = token.split('.')[1];
  if (!payload) return {};
  try {
    const base64 = payload
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(payload.length / 4) * 4, '=');
    const text = new TextDecoder().decode(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
    const claims = JSON.parse(text) as unknown;
    return typeof claims === 'object' && claims !== null ? (claims as TokenClaims) : {};
  } catch {
    return {};
  }
}

/**
 * When to renew an access token of `expiresInSeconds`: the client package's rule (a fifth of its
 * lifetime before it expires, at most a minute before; 300 s: after 240 s), never sooner than a second.
 */
export const renewalDelayMs = (expiresInSeconds: number): number => Math.max(1000, renewAt(0, expiresInSeconds));
