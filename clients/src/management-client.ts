import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from '@platform/api-types/management';
import { EventFeed, type EventFeedOptions } from './event-feed.ts';
import { plainTransport, retryPolicy, type CommonOptions, type JsonMedia } from './options.ts';
import { pagesOf, type Page } from './pages.ts';
import { failureOf } from './problem.ts';
import { throwProblems } from './throw-problems.ts';
import { TokenSession } from './token-session.ts';
import { newIdempotencyKey } from './idempotency-key.ts';
import { transport } from './transport.ts';

/** An outbound event; `data` holds the fields of its `subject.action` (contracts/events.asyncapi.yaml). */
export type EventEnvelope = Omit<components['schemas']['EventEnvelope'], 'data'> & { data: Record<string, unknown> };
export type EventSubject = components['schemas']['EventSubject'];

type GetOf<P extends keyof paths> = NonNullable<paths[P]['get']>;
type JsonOf<O> = O extends { responses: { 200: { content: { 'application/json': infer J } } } } ? J : never;

/** The collection paths: a GET paged with `offset` whose answer has `next` and `results`. */
export type CollectionPath = {
  [P in keyof paths]: [GetOf<P>] extends [never]
    ? never
    : GetOf<P> extends { parameters: { query?: { offset?: number } } }
      ? JsonOf<GetOf<P>> extends { next: string | null; results: unknown[] }
        ? P
        : never
      : never;
}[keyof paths];
/** One entity (or selection) of a collection's answer. */
export type ItemOf<P extends CollectionPath> = JsonOf<GetOf<P>> extends { results: (infer I)[] } ? I : never;
/** One page of a collection, as the contract types it. */
export type PageOf<P extends CollectionPath> = JsonOf<GetOf<P>> & Page<ItemOf<P>>;
/** The parameters of a collection query; `offset` is the iterator's. */
export type CollectionParams<P extends CollectionPath> = {
  path?: GetOf<P>['parameters']['path'];
  query?: Omit<NonNullable<GetOf<P>['parameters']['query']>, 'offset'> & { offset?: number };
};

export type ManagementClientOptions = CommonOptions & {
  /** A machine client's access key: the client logs in, renews its token and logs in again as needed. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** A fixed access token instead (an end user's, from `POST /auth/user-token/`); it is not renewed. */
  token?: string;
  /**
   * A token session of the caller's instead of `credentials`: several clients (e.g. one that retries
   * and one that does not) share its login and renewals, or its login is the caller's own (a person
   * who signs in once, whose secret is not kept).
   */
  session?: TokenSession;
  /** The clock the token renewal reads (Date.now by default). */
  clock?: () => number;
};

type AnyGet = (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/**
 * A typed client of the management interface (contracts/management.openapi.yaml): openapi-fetch's
 * `GET`, `POST`, `PATCH`, `DELETE` on the contract's paths, plus `pages`/`items` over collections,
 * `events` over `GET /events/` and the token `session` (docs/adr/0034-client-package.md).
 */
export function createManagementClient(options: ManagementClientOptions) {
  const clock = options.clock ?? Date.now;
  const tokenClient = createClient<paths, JsonMedia>({ baseUrl: options.baseUrl, fetch: plainTransport(options) });
  tokenClient.use(throwProblems);
  const { credentials } = options;
  const session =
    options.session ??
    (credentials
      ? new TokenSession({
          login: async () =>
            (await tokenClient.POST('/auth/login/', { body: { access_key_id: credentials.accessKeyId, secret_access_key: credentials.secretAccessKey } }))
              .data!,
          refresh: async (refreshToken) => (await tokenClient.POST('/auth/refresh-token/', { body: { refresh_token: refreshToken } })).data!,
          now: clock,
          onEvent: options.onEvent,
        })
      : undefined);
  const client: Client<paths, JsonMedia> = createClient<paths, JsonMedia>({
    baseUrl: options.baseUrl,
    headers: { ...options.headers, ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    fetch: transport({
      fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
      retry: retryPolicy(options.retry),
      session,
      newKey: () => newIdempotencyKey(),
      now: clock,
      random: Math.random,
      onRetry: options.onEvent,
    }),
  });
  // onResponse handlers run last-registered first: the caller's see every answer before it becomes an exception.
  if (options.problems !== 'return') client.use(throwProblems);
  if (options.middleware?.length) client.use(...options.middleware);

  const get = client.GET as unknown as AnyGet;
  const getData = async <T>(path: string, init: object): Promise<T> => {
    const { data, error, response } = await get(path, init);
    if (!response.ok) throw failureOf(error, response.status, `GET ${path}`);
    return data as T;
  };

  /** Every page of a collection (`for await (const page of client.pages('/portfolios/', { query: { query: "…" } }))`). */
  function pages<P extends CollectionPath>(path: P, params: CollectionParams<P> = {}, init: { signal?: AbortSignal } = {}) {
    return pagesOf(
      (offset) => getData<PageOf<P>>(path, { params: { ...params, query: { ...params.query, offset } }, signal: init.signal }),
      params.query?.offset ?? 0,
    );
  }

  /** Every entity of a collection query, page after page. */
  async function* items<P extends CollectionPath>(path: P, params: CollectionParams<P> = {}, init: { signal?: AbortSignal } = {}): AsyncGenerator<ItemOf<P>> {
    for await (const page of pages(path, params, init)) yield* (page as Page<ItemOf<P>>).results;
  }

  /**
   * The tenant's outbound events from a cursor, of one subject or about one entity (`entityId`, e.g.
   * a portfolio's id) when given; with `follow`, polls for new ones until the signal aborts.
   */
  function events(feed: EventFeedOptions & { subject?: EventSubject; entityId?: string; limit?: number } = {}): EventFeed<EventEnvelope> {
    const { subject, entityId, limit } = feed;
    return new EventFeed(
      (after, signal) =>
        getData<{ results: EventEnvelope[]; next_cursor: string }>('/events/', { params: { query: { after, subject, entity_id: entityId, limit } }, signal }),
      feed,
    );
  }

  return Object.assign(client, { session, pages, items, events });
}

export type ManagementClient = ReturnType<typeof createManagementClient>;
