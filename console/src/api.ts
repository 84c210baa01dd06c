// Calls to the two public interfaces: signing in with a tenant's access key, the token kept in
// memory only and renewed with its refresh token, and problem+json answers as the client package's
// ApiProblem (docs/adr/0036-administration-console.md).
import { TokenSession, failureOf, type Tokens } from '@platform/client';
import { renewalDelayMs, tokenClaims } from './lib/tokens.ts';

export type ConsoleConfig = { data_service_url: string | null; docs_url: string };

async function answer<T>(res: Response, operation: string): Promise<T> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) throw failureOf(body ?? text, res.status, operation);
  return body as T;
}

async function post<T>(url: string, body: unknown): Promise<T> {
  return answer<T>(
    await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) }),
    `POST ${url}`,
  );
}

export type Credentials = { accessKeyId: string; secret: string; apiKey?: string };

/**
 * A signed-in operator. The tokens live in this object only (never in storage or cookies): a
 * reload of the page signs out. The client package's TokenSession holds them and renews the
 * access token with the refresh token (callers at the same time share one renewal); a timer
 * renews it before it expires, and a 401 once more. The access key is used for the sign-in
 * only: when renewal fails, the session ends and `onEnd` says why.
 */
export class Session {
  private readonly tokens: TokenSession;
  private readonly apiKey: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private ended = false;
  #tenantId = '';

  private constructor(
    private readonly config: ConsoleConfig,
    credentials: Credentials,
    private readonly onEnd: (reason: string) => void,
  ) {
    this.apiKey = credentials.apiKey || undefined;
    let signIn: Credentials | undefined = credentials;
    this.tokens = new TokenSession({
      // The first token only; afterwards the refresh token alone renews it.
      login: () => {
        const once = signIn;
        signIn = undefined;
        if (!once) return Promise.reject(new Error('The refresh token was refused.'));
        return post<Tokens>('/auth/login/', { access_key_id: once.accessKeyId, secret_access_key: once.secret });
      },
      refresh: (refreshToken) => post<Tokens>('/auth/refresh-token/', { refresh_token: refreshToken }),
      now: () => Date.now(),
      onEvent: (event) => {
        if (event.type === 'refresh-failed') this.signOut('Your session ended (its token could not be renewed): sign in again.');
      },
    });
  }

  static async signIn(config: ConsoleConfig, credentials: Credentials, onEnd: (reason: string) => void): Promise<Session> {
    const session = new Session(config, credentials, onEnd);
    session.#tenantId = tokenClaims(await session.tokens.accessToken()).tenant_id ?? '';
    session.schedule();
    return session;
  }

  get tenantId(): string {
    return this.#tenantId;
  }

  /** Whether the data pages can call the data service: its URL is configured and an API key was given. */
  get hasData(): boolean {
    return Boolean(this.config.data_service_url && this.apiKey);
  }

  get dataServiceUrl(): string | null {
    return this.config.data_service_url;
  }

  signOut(reason = 'Signed out.'): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.onEnd(reason);
  }

  /** Renews the access token when the one held now comes to its renewal time, whether or not a call needs it then. */
  private schedule(): void {
    const held = this.tokens.current();
    if (this.ended || !held) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () =>
        void this.tokens.accessToken().then(
          () => this.schedule(),
          () => undefined,
        ),
      renewalDelayMs(held.expires_in),
    );
  }

  /** A call to the management interface with the access token; `path` starts with `/`. */
  async management<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    if (this.ended) throw new Error('Signed out.');
    const send = (token: string) =>
      fetch(path, {
        method,
        signal,
        headers: {
          accept: 'application/json',
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const token = await this.tokens.accessToken();
    let res = await send(token);
    if (res.status === 401) {
      res = await send(await this.tokens.rejected(token));
      this.schedule();
    }
    return answer<T>(res, `${method} ${path}`);
  }

  /** A call to the data service with the tenant's id and API key (only when `hasData`). */
  async data<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    if (!this.config.data_service_url || !this.apiKey) {
      throw new Error('The data pages need the data service: sign in with a data API key (and the service must name CONSOLE_DATA_SERVICE_URL).');
    }
    const res = await fetch(`${this.config.data_service_url}${path}`, {
      method,
      signal,
      headers: {
        accept: 'application/json',
        'x-tenant-id': this.tenantId,
        'x-api-key': this.apiKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return answer<T>(res, `${method} ${path}`);
  }
}

export async function loadConfig(): Promise<ConsoleConfig> {
  return answer<ConsoleConfig>(await fetch('config.json', { headers: { accept: 'application/json' } }), 'GET config.json');
}
