import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { setTenantRateLimits } from '@platform/dev-stack/tenants';
import { ApiProblem, TokenSession, createDataClient, createManagementClient, isProblem, type ClientEvent } from '../src/index.ts';

describe('client package against the real services', function () {
  this.timeout(90_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  // Short rate-limit windows, read at once, so that a refused call's Retry-After is a second or two.
  before(async () => {
    platform = await startTestPlatform({ RATE_LIMIT_WINDOW_SECONDS: '2', TOKEN_REVOCATION_CHECK_MS: '0' });
    tenant = await platform.tenant();
  });
  after(() => platform?.stop());

  const credentials = (t: TestTenant) => ({ accessKeyId: t.accessKeyId, secretAccessKey: t.secret });
  const raw = (path: string, body: unknown) =>
    fetch(platform.managementUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('logs in by itself and sends one Idempotency-Key per POST: a POST whose answer was lost is sent again and performed once', async () => {
    let dropped = false;
    const answers: { key: string | null; replayed: string | null; status: number }[] = [];
    const client = createManagementClient({
      baseUrl: platform.managementUrl,
      credentials: credentials(tenant),
      retry: { baseDelayMs: 10 },
      // The first answer to POST /users/ is lost on its way back: the user was created, the client does not know.
      fetch: async (request) => {
        const response = await fetch(request);
        if (new URL(request.url).pathname === '/users/' && request.method === 'POST') {
          answers.push({ key: request.headers.get('idempotency-key'), replayed: response.headers.get('idempotency-replayed'), status: response.status });
          if (!dropped) {
            dropped = true;
            throw new TypeError('fetch failed: connection reset');
          }
        }
        return response;
      },
    });
    const { data: user } = await client.POST('/users/', { body: { external_id: 'crm-lost-answer', first_name: 'Lin' } });
    assert.equal(user!.external_id, 'crm-lost-answer');
    assert.equal(answers.length, 2);
    assert.ok(answers[0]!.key && answers[0]!.key === answers[1]!.key, 'the same key on the retry');
    assert.deepEqual(
      answers.map((a) => [a.status, a.replayed]),
      [
        [201, null],
        [201, 'true'],
      ],
    );
    const found = await client.GET('/users/', { params: { query: { query: "external_id eq 'crm-lost-answer'" } } });
    assert.equal(found.data!.count, 1, 'one user, not two');
  });

  it("takes a token session of the caller's: clients that share it log in once, with the caller's login", async () => {
    const events: string[] = [];
    const tokens = createManagementClient({ baseUrl: platform.managementUrl });
    let logins = 0;
    const session = new TokenSession({
      login: async () => {
        logins += 1;
        return (await tokens.POST('/auth/login/', { body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret } })).data!;
      },
      refresh: async (refreshToken) => (await tokens.POST('/auth/refresh-token/', { body: { refresh_token: refreshToken } })).data!,
      now: Date.now,
      onEvent: (event) => events.push(event.type),
    });
    const retrying = createManagementClient({ baseUrl: platform.managementUrl, session });
    const once = createManagementClient({ baseUrl: platform.managementUrl, session, retry: false });
    const { data: user } = await retrying.POST('/users/', { body: { first_name: 'Shared' } });
    const { data: read } = await once.GET('/users/{user_id}', { params: { path: { user_id: user!.id } } });
    assert.equal(read!.id, user!.id);
    assert.equal(logins, 1);
    assert.equal(retrying.session, session);
    assert.equal(once.session, session);
    // A refused token is renewed once for both: the next call of either sends the renewed one.
    const held = session.current()!.access_token;
    await session.rejected(held);
    assert.notEqual(session.current()!.access_token, held);
    await once.GET('/users/{user_id}', { params: { path: { user_id: user!.id } } });
    assert.deepEqual(events, ['login', 'rejected', 'refresh']);
  });

  it('throws problem+json answers as ApiProblem with status, code, title, detail, position, errors and request id', async () => {
    const client = createManagementClient({ baseUrl: platform.managementUrl, credentials: credentials(tenant) });
    const badQuery = await client.GET('/users/', { params: { query: { query: "first_name eq 'a' andd" } } }).catch((e: unknown) => e);
    assert.ok(isProblem(badQuery, 'invalid_query'), String(badQuery));
    assert.equal(badQuery.status, 400);
    assert.equal(badQuery.title, 'Bad Request');
    const query = "first_name eq 'a' andd";
    assert.ok(
      badQuery.position !== undefined && badQuery.position >= 18 && badQuery.position <= query.length,
      `position ${badQuery.position}: at or after 'andd'`,
    );
    assert.ok(badQuery.detail?.includes(`position ${badQuery.position}`), badQuery.detail);
    assert.match(badQuery.requestId, /^[0-9A-Z]{26}$/);
    assert.deepEqual(badQuery.errors[0]!.loc, ['query', 'query']);

    const invalid = await client.POST('/users/', { body: { first_name: 42 } as never }).catch((e: unknown) => e);
    assert.ok(invalid instanceof ApiProblem && invalid.is('validation_failed'), String(invalid));
    assert.equal(invalid.status, 422);
    assert.ok(
      invalid.errors.some((e) => e.loc.join('.') === 'body.first_name'),
      JSON.stringify(invalid.errors),
    );
    assert.equal(invalid.field, 'first_name');

    const missing = await client
      .GET('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: 'P01HZC48CNR9YNY5M4C8F5S2HT9' } } })
      .catch((e: unknown) => e);
    assert.ok(isProblem(missing, 'not_found') && missing.status === 404, String(missing));

    const wrong = createManagementClient({ baseUrl: platform.managementUrl, credentials: { accessKeyId: tenant.accessKeyId, secretAccessKey: 'wrong' } });
    const refused = await wrong.GET('/users/').catch((e: unknown) => e);
    assert.ok(isProblem(refused, 'unauthenticated'), String(refused));

    const lenient = createManagementClient({ baseUrl: platform.managementUrl, credentials: credentials(tenant), problems: 'return' });
    const answered = await lenient.GET('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: 'P01HZC48CNR9YNY5M4C8F5S2HT9' } } });
    assert.deepEqual([answered.response.status, answered.error?.code], [404, 'not_found']);
  });

  it('renews its token with the refresh token before it expires, and logs in anew when a stolen refresh token ended its chain', async () => {
    let clock = Date.now();
    const events: string[] = [];
    const client = createManagementClient({
      baseUrl: platform.managementUrl,
      credentials: credentials(tenant),
      clock: () => clock,
      onEvent: (event: ClientEvent) => events.push(event.type === 'rejected' ? `${event.type}:${event.reason}` : event.type),
    });
    await client.GET('/users/');
    const first = client.session!.current()!;
    clock += 250_000; // past 240 s of the 300 s token
    await client.GET('/users/');
    const second = client.session!.current()!;
    assert.notEqual(second.access_token, first.access_token);
    assert.notEqual(second.refresh_token, first.refresh_token);

    // Someone presents the spent first refresh token (a stolen copy): the service ends the whole chain
    // (docs/adr/0005-auth-and-tokens.md), the client's current tokens included.
    assert.equal((await raw('/auth/refresh-token/', { refresh_token: first.refresh_token })).status, 401);
    const { data } = await client.GET('/users/');
    assert.ok(Array.isArray(data!.results));
    assert.deepEqual(events, ['login', 'rejected:expired', 'refresh', 'rejected:answer-401', 'refresh-failed', 'login']);
    assert.equal((await raw('/auth/refresh-token/', { refresh_token: second.refresh_token })).status, 401, 'the chain is over');
  });

  it('waits out 429 answers of the real rate limiter as their Retry-After says, and every call succeeds', async () => {
    const limited = await platform.tenant();
    await setTenantRateLimits(platform.database.db, limited.tenantId, { requests_per_minute: 3 });
    const refusals: string[] = [];
    const retries: number[] = [];
    const client = createManagementClient({
      baseUrl: platform.managementUrl,
      credentials: credentials(limited),
      fetch: async (request) => {
        const response = await fetch(request);
        if (response.status === 429) refusals.push(response.headers.get('retry-after') ?? 'none');
        return response;
      },
      onEvent: (event) => {
        if (event.type === 'retry') retries.push(event.delayMs);
      },
    });
    // Three calls fit the window; the fourth is refused until the next one.
    for (let i = 0; i < 4; i++) assert.ok(Array.isArray((await client.GET('/users/')).data!.results));
    assert.ok(refusals.length >= 1, 'the limiter refused some calls');
    assert.deepEqual(
      retries,
      refusals.map((seconds) => Number(seconds) * 1000),
      'each retry waited what the Retry-After of its refusal said',
    );
  });

  it('iterates over every page of a query and over the event feed, resuming from its cursor', async () => {
    const own = await platform.tenant();
    const client = createManagementClient({ baseUrl: platform.managementUrl, credentials: credentials(own) });
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await client.POST('/users/', { body: { first_name: 'Paged', last_name: `n${i}` } })).data!.id);
    const pages: number[] = [];
    for await (const page of client.pages('/users/', { query: { query: "first_name eq 'Paged' orderby last_name", limit: 2 } }))
      pages.push(page.results.length);
    assert.deepEqual(pages, [2, 2, 1]);
    const ids: string[] = [];
    for await (const user of client.items('/users/', { query: { query: "first_name eq 'Paged' orderby last_name", limit: 2 } })) ids.push(user.id);
    assert.deepEqual(ids, created);

    const portfolio = async (name: string) =>
      (
        await client.POST('/portfolios/', {
          body: {
            name,
            owned_by_user_id: created[0]!,
            base_currency: 'EUR',
            money_type: 'REAL_MONEY',
            config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
          },
        })
      ).data!.id;
    const firstId = await portfolio('first');
    const feed = client.events({ subject: 'portfolios' });
    const seen: string[] = [];
    for await (const event of feed) seen.push(`${event.action}:${event.data.id}`);
    assert.ok(seen.includes(`creation:${firstId}`), seen.join(', '));
    assert.ok(feed.cursor);

    const secondId = await portfolio('second');
    const controller = new AbortController();
    const later: string[] = [];
    for await (const event of client.events({ subject: 'portfolios', after: feed.cursor, follow: true, pollIntervalMs: 100, signal: controller.signal })) {
      later.push(`${event.action}:${event.data.id}`);
      if (later.includes(`creation:${secondId}`)) controller.abort();
    }
    assert.equal(later[0], `creation:${secondId}`, later.join(', '));
    assert.ok(!later.some((event) => event.endsWith(firstId)), `only what came after the cursor: ${later.join(', ')}`);
  });

  it('calls the data service with the tenant headers and throws its problems', async () => {
    const data = createDataClient({ baseUrl: platform.dataUrl, tenantId: tenant.tenantId, apiKey: tenant.apiKey });
    const universe = await data.GET('/data/reference/universe/', { params: { query: { universe_name: 'GLOBAL', fields: ['NAME'] } } });
    const isin = Object.keys((universe.data as { data: Record<string, unknown> }).data)[0]!;
    const { data: reference } = await data.POST('/data/reference/query/', { body: { instrument_ids: [isin], fields: ['NAME'], fields_extra: [] } });
    assert.ok((reference as { data: Record<string, { name: string }> }).data[isin]?.name, JSON.stringify(reference));

    const stranger = createDataClient({ baseUrl: platform.dataUrl, tenantId: tenant.tenantId, apiKey: 'not-a-key' });
    const refused = await stranger
      .POST('/data/reference/query/', { body: { instrument_ids: [isin], fields: ['NAME'], fields_extra: [] } })
      .catch((e: unknown) => e);
    assert.ok(isProblem(refused, 'unauthenticated') && refused.status === 401, String(refused));
  });
});
