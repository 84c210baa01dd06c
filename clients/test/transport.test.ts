import assert from 'node:assert/strict';
import { DEFAULT_RETRY } from '../src/retry-policy.ts';
import { TokenSession } from '../src/token-session.ts';
import { transport, type RetryEvent } from '../src/transport.ts';

type Seen = { method: string; key: string | null; authorization: string | null; body: string };

/** A fake service answering from a script, one answer (or thrown error) per request, recording what it got. */
function scripted(answers: (Response | Error)[]) {
  const seen: Seen[] = [];
  const fetch = async (request: Request) => {
    seen.push({
      method: request.method,
      key: request.headers.get('idempotency-key'),
      authorization: request.headers.get('authorization'),
      body: await request.text(),
    });
    const next = answers.shift();
    if (!next) throw new Error('the script has no answer left');
    if (next instanceof Error) throw next;
    return next;
  };
  return { seen, fetch };
}

const answer = (status: number, headers: Record<string, string> = {}) => new Response(status === 204 ? null : '{}', { status, headers });
const noWait = { ...DEFAULT_RETRY, baseDelayMs: 0, maxDelayMs: 0 };

function client(fetch: (r: Request) => Promise<Response>, extra: { session?: TokenSession; retries?: RetryEvent[]; keys?: string[] } = {}) {
  let serial = 0;
  return transport({
    fetch,
    retry: noWait,
    session: extra.session,
    newKey: () => {
      const key = `key-${++serial}`;
      extra.keys?.push(key);
      return key;
    },
    now: () => 0,
    random: () => 0,
    onRetry: (event) => extra.retries?.push(event),
  });
}

const post = (body: string, headers: Record<string, string> = {}) =>
  new Request('http://service.test/events/deposit/', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

describe('client transport (in-memory service)', () => {
  it('gives a POST a new Idempotency-Key and sends the same key and body on every retry', async () => {
    const service = scripted([answer(503), new TypeError('fetch failed'), answer(429, { 'retry-after': '0' }), answer(201), answer(201)]);
    const retries: RetryEvent[] = [];
    const send = client(service.fetch, { retries });
    const response = await send(post('{"amount":"10"}'));
    assert.equal(response.status, 201);
    assert.deepEqual(
      service.seen.map((s) => [s.key, s.body]),
      Array(4).fill(['key-1', '{"amount":"10"}']),
    );
    assert.deepEqual(
      retries.map((r) => [r.attempt, r.reason]),
      [
        [1, 'answer 503'],
        [2, 'no answer'],
        [3, 'answer 429'],
      ],
    );
    await send(post('{}'));
    assert.equal(service.seen[4]!.key, 'key-2', 'the next logical call has a key of its own');
  });

  it("keeps the caller's own Idempotency-Key", async () => {
    const service = scripted([answer(503), answer(201)]);
    await client(service.fetch)(post('{}', { 'idempotency-key': 'mine-42' }));
    assert.deepEqual(
      service.seen.map((s) => s.key),
      ['mine-42', 'mine-42'],
    );
  });

  it('does not send a PATCH again after a lost answer (it may have been applied), nor add a key to it', async () => {
    const service = scripted([new TypeError('fetch failed')]);
    const patch = new Request('http://service.test/portfolios/P1', { method: 'PATCH', body: '{}' });
    await assert.rejects(client(service.fetch)(patch), /fetch failed/);
    assert.deepEqual(
      service.seen.map((s) => s.key),
      [null],
    );
  });

  it('answers the last refusal when the attempts are spent', async () => {
    const service = scripted(Array.from({ length: noWait.maxAttempts }, () => answer(503)));
    const response = await client(service.fetch)(new Request('http://service.test/users/'));
    assert.equal(response.status, 503);
    assert.equal(service.seen.length, noWait.maxAttempts);
  });

  it('stops waiting when the signal aborts between attempts', async () => {
    const controller = new AbortController();
    const service = scripted([answer(429, { 'retry-after': '3600' })]);
    const pending = transport({
      fetch: service.fetch,
      retry: { ...DEFAULT_RETRY, maxElapsedMs: 10_000_000 },
      newKey: () => 'k',
      now: () => 0,
      random: () => 0,
    })(new Request('http://service.test/users/', { signal: controller.signal }));
    setImmediate(() => controller.abort(new Error('caller gave up')));
    await assert.rejects(pending, /caller gave up/);
    assert.equal(service.seen.length, 1);
  });

  it("sends the session's token, renews it once on a 401 and sends again with the new one", async () => {
    let serial = 0;
    const session = new TokenSession({
      login: async () => ({ access_token: `t${++serial}`, refresh_token: `r${serial}`, expires_in: 300 }),
      refresh: async () => ({ access_token: `t${++serial}`, refresh_token: `r${serial}`, expires_in: 300 }),
      now: () => 0,
    });
    const service = scripted([answer(401), answer(200), answer(401), answer(401)]);
    const send = client(service.fetch, { session });
    assert.equal((await send(new Request('http://service.test/users/'))).status, 200);
    assert.equal((await send(new Request('http://service.test/users/'))).status, 401, 'a second 401 in one call is the answer');
    assert.deepEqual(
      service.seen.map((s) => s.authorization),
      ['Bearer t1', 'Bearer t2', 'Bearer t2', 'Bearer t3'],
    );
  });
});
