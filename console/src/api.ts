// Calls to the two public interfaces through the client package (@platform/client): its transport
// (retries of 429 and 503 by Retry-After or back-off, one renewal and resend on a 401), its token
// session, and problem+json answers as its ApiProblem (docs/adr/0036-administration-console.md,
// docs/adr/0034-client-package.md).
import { TokenSession, createDataClient, createManagementClient, failureOf, type DataClient, type ManagementClient } from '@platform/client';
import { renewalDelayMs, tokenClaims } from './lib/tokens.ts';

export type ConsoleConfig = { data_service_url: string | null; docs_url: string };

/** The methods the pages call; a page builds its paths from an entity's id, so they are not the contract's templates. */
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
type UntypedCall = (path: string, init: { body?: unknown; signal?: AbortSignal }) => Promise<{ data?: unknown }>;

/** One call of `client` by a path the contract's types do not name literally (a query string included); the answer is the caller's generated type. */
async function call<T>(client: ManagementClient | DataClient, method: Method, path: string, body: unknown, signal: AbortSignal | undefined): Promise<T> {
  const send = client[method] as unknown as UntypedCall;
  return (await send.call(client, path, { body, signal })).data as T;
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
  private readonly api: ManagementClient;
  private dataApi: DataClient | undefined;
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
    // The management service is the page's own origin; the token calls are sent once, as a person waits for them.
    const baseUrl = location.origin;
    const tokenCalls = createManagementClient({ baseUrl, retry: false });
    this.tokens = new TokenSession({
      // The first token only; afterwards the refresh token alone renews it.
      login: async () => {
        const once = signIn;
        signIn = undefined;
        if (!once) throw new Error('The refresh token was refused.');
        return (await tokenCalls.POST('/auth/login/', { body: { access_key_id: once.accessKeyId, secret_access_key: once.secret } })).data!;
      },
      refresh: async (refreshToken) => (await tokenCalls.POST('/auth/refresh-token/', { body: { refresh_token: refreshToken } })).data!,
      now: () => Date.now(),
      onEvent: (event) => {
        if (event.type === 'refresh-failed') this.signOut('Your session ended (its token could not be renewed): sign in again.');
        // A renewal on a 401 moves the next scheduled one.
        if (event.type === 'refresh') this.schedule();
      },
    });
    this.api = createManagementClient({ baseUrl, session: this.tokens });
  }

  static async signIn(config: ConsoleConfig, credentials: Credentials, onEnd: (reason: string) => void): Promise<Session> {
    const session = new Session(config, credentials, onEnd);
    session.#tenantId = tokenClaims(await session.tokens.accessToken()).tenant_id ?? '';
    if (config.data_service_url && session.apiKey) {
      session.dataApi = createDataClient({ baseUrl: config.data_service_url, tenantId: session.#tenantId, apiKey: session.apiKey });
    }
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
  async management<T>(method: Method, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    if (this.ended) throw new Error('Signed out.');
    return call<T>(this.api, method, path, body, signal);
  }

  /** A call to the data service with the tenant's id and API key (only when `hasData`). */
  async data<T>(method: Method, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    if (!this.dataApi) {
      throw new Error('The data pages need the data service: sign in with a data API key (and the service must name CONSOLE_DATA_SERVICE_URL).');
    }
    return call<T>(this.dataApi, method, path, body, signal);
  }
}

/** The console's own settings, a file beside its pages (not an operation of either interface). */
export async function loadConfig(): Promise<ConsoleConfig> {
  const res = await fetch('config.json', { headers: { accept: 'application/json' } });
  const body: unknown = await res.json().catch(() => undefined);
  if (!res.ok) throw failureOf(body, res.status, 'GET config.json');
  return body as ConsoleConfig;
}
