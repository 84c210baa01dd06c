// Calls to the two public interfaces: signing in with a tenant's access key, the token kept in
// memory only and renewed with its refresh token, and problem+json answers as the client package's
// ApiProblem (docs/adr/0036-administration-console.md).
import { failureOf } from '@platform/client';
import { renewalDelayMs, tokenClaims } from './lib/tokens.ts';

export type ConsoleConfig = { data_service_url: string | null; docs_url: string };

type Tokens = { access_token: string; refresh_token: string; expires_in: number };

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
 * reload of the page signs out. The access token is renewed before it expires, and once more on
 * a 401; when renewal fails the session ends and `onEnd` says why.
 */
export class Session {
  readonly tenantId: string;
  private tokens: Tokens;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private renewing: Promise<void> | undefined;
  private ended = false;

  private constructor(
    private readonly config: ConsoleConfig,
    tokens: Tokens,
    private readonly apiKey: string | undefined,
    private readonly onEnd: (reason: string) => void,
  ) {
    this.tokens = tokens;
    this.tenantId = tokenClaims(tokens.access_token).tenant_id ?? '';
    this.schedule();
  }

  static async signIn(config: ConsoleConfig, credentials: Credentials, onEnd: (reason: string) => void): Promise<Session> {
    const tokens = await post<Tokens>('/auth/login/', { access_key_id: credentials.accessKeyId, secret_access_key: credentials.secret });
    return new Session(config, tokens, credentials.apiKey || undefined, onEnd);
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
    this.tokens = { access_token: '', refresh_token: '', expires_in: 0 };
    this.onEnd(reason);
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.renew().catch(() => undefined), renewalDelayMs(this.tokens.expires_in));
  }

  /** Exchanges the refresh token for new tokens; calls at the same time share one exchange. */
  private renew(): Promise<void> {
    this.renewing ??= post<Tokens>('/auth/refresh-token/', { refresh_token: this.tokens.refresh_token })
      .then((tokens) => {
        this.tokens = tokens;
        this.schedule();
      })
      .catch((error: unknown) => {
        this.signOut('Your session ended (its token could not be renewed): sign in again.');
        throw error;
      })
      .finally(() => {
        this.renewing = undefined;
      });
    return this.renewing;
  }

  /** A call to the management interface with the access token; `path` starts with `/`. */
  async management<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const send = () =>
      fetch(path, {
        method,
        signal,
        headers: {
          accept: 'application/json',
          authorization: `Bearer ${this.tokens.access_token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    let res = await send();
    if (res.status === 401 && !this.ended) {
      await this.renew();
      res = await send();
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
