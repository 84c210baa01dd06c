/**
 * A machine client's access token: logged in once, renewed with the refresh token before it
 * expires, renewed once more when an answer says it is no longer valid, and logged in anew when the
 * refresh chain is spent. Concurrent callers share one login or renewal. The calls to the service
 * and the clock are given, so the rules are tested without I/O (docs/adr/0034-client-package.md).
 */

/** What `POST /auth/login/` and `POST /auth/refresh-token/` answer (TokenResponse). */
export type Tokens = { access_token: string; refresh_token: string; expires_in: number };

export type TokenEvent =
  { type: 'login' } | { type: 'refresh' } | { type: 'refresh-failed'; error: unknown } | { type: 'rejected'; reason: 'expired' | 'answer-401' };

export type TokenSessionOptions = {
  login: () => Promise<Tokens>;
  refresh: (refreshToken: string) => Promise<Tokens>;
  now: () => number;
  /** Sees each login, renewal and failed renewal (logs, metrics, tests). */
  onEvent?: (event: TokenEvent) => void;
};

/** Renew at 80 % of the lifetime, but never more than 60 s before the end (300 s tokens: at 240 s). */
export function renewAt(issuedAt: number, expiresInSeconds: number): number {
  const lifetime = expiresInSeconds * 1000;
  return issuedAt + Math.max(lifetime - 60_000, lifetime * 0.8);
}

type Held = { tokens: Tokens; renewAt: number };

export class TokenSession {
  private held: Held | undefined;
  private pending: Promise<Held> | undefined;

  constructor(private readonly options: TokenSessionOptions) {}

  /** A valid access token: the held one, or one from a renewal (shared with concurrent callers). */
  async accessToken(): Promise<string> {
    const held = this.held;
    if (held && this.options.now() < held.renewAt) return held.tokens.access_token;
    if (held) this.options.onEvent?.({ type: 'rejected', reason: 'expired' });
    return (await this.renew(held)).tokens.access_token;
  }

  /**
   * The service answered 401 to `token`: renew unless another caller already did, and return the
   * token to send again.
   */
  async rejected(token: string): Promise<string> {
    const held = this.held;
    if (held && held.tokens.access_token !== token) return held.tokens.access_token;
    this.options.onEvent?.({ type: 'rejected', reason: 'answer-401' });
    return (await this.renew(held)).tokens.access_token;
  }

  /** The tokens held now (undefined before the first call): for a caller that keeps them between runs. */
  current(): Tokens | undefined {
    return this.held?.tokens;
  }

  private renew(from: Held | undefined): Promise<Held> {
    this.pending ??= this.obtain(from).finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async obtain(from: Held | undefined): Promise<Held> {
    const { login, refresh, now, onEvent } = this.options;
    // The lifetime counts from before the request: the token was issued no earlier than that.
    if (from) {
      const asked = now();
      try {
        const tokens = await refresh(from.tokens.refresh_token);
        onEvent?.({ type: 'refresh' });
        return this.keep(tokens, asked);
      } catch (error) {
        // A spent, expired or revoked refresh token (401): the chain is over, log in anew. Any
        // other failure is the caller's to see.
        onEvent?.({ type: 'refresh-failed', error });
        if ((error as { status?: number }).status !== 401) throw error;
      }
    }
    const asked = now();
    const tokens = await login();
    onEvent?.({ type: 'login' });
    return this.keep(tokens, asked);
  }

  private keep(tokens: Tokens, issuedAt: number): Held {
    this.held = { tokens, renewAt: renewAt(issuedAt, tokens.expires_in) };
    return this.held;
  }
}
