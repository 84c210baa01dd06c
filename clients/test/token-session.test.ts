import assert from 'node:assert/strict';
import { TokenSession, renewAt, type TokenEvent, type Tokens } from '../src/token-session.ts';

/** A fake token service: numbered tokens, refresh tokens spent once used, a clock the test moves. */
function fakeService(expiresIn = 300) {
  const state = { clock: 0, logins: 0, refreshes: 0, spent: new Set<string>(), events: [] as string[], serial: 0 };
  const issue = (): Tokens => {
    state.serial += 1;
    return { access_token: `access-${state.serial}`, refresh_token: `refresh-${state.serial}`, expires_in: expiresIn };
  };
  let gate: Promise<void> = Promise.resolve();
  const session = new TokenSession({
    login: async () => {
      await gate;
      state.logins += 1;
      return issue();
    },
    refresh: async (token) => {
      await gate;
      if (state.spent.has(token)) throw Object.assign(new Error('refresh token spent'), { status: 401 });
      state.spent.add(token);
      state.refreshes += 1;
      return issue();
    },
    now: () => state.clock,
    onEvent: (event: TokenEvent) => state.events.push(event.type === 'rejected' ? `rejected:${event.reason}` : event.type),
  });
  return {
    state,
    session,
    hold: (until: Promise<void>) => {
      gate = until;
    },
  };
}

describe('client token session (pure)', () => {
  it('renews at 80 % of the lifetime, at most 60 s before its end', () => {
    assert.equal(renewAt(1000, 300), 1000 + 240_000);
    assert.equal(renewAt(0, 3600), 3_540_000);
    assert.equal(renewAt(0, 30), 24_000);
  });

  it('logs in once, keeps the token until its renewal time, then renews it with the refresh token', async () => {
    const { state, session } = fakeService();
    assert.equal(await session.accessToken(), 'access-1');
    state.clock = 239_999;
    assert.equal(await session.accessToken(), 'access-1');
    state.clock = 240_000;
    assert.equal(await session.accessToken(), 'access-2');
    assert.deepEqual([state.logins, state.refreshes], [1, 1]);
    assert.ok(state.spent.has('refresh-1'));
    assert.deepEqual(state.events, ['login', 'rejected:expired', 'refresh']);
  });

  it('shares one login among concurrent callers, and one renewal', async () => {
    const { state, session, hold } = fakeService();
    let open!: () => void;
    hold(new Promise<void>((resolve) => (open = resolve)));
    const first = Promise.all(Array.from({ length: 5 }, () => session.accessToken()));
    open();
    assert.deepEqual(await first, Array(5).fill('access-1'));
    state.clock = 250_000;
    assert.deepEqual(await Promise.all(Array.from({ length: 5 }, () => session.accessToken())), Array(5).fill('access-2'));
    assert.deepEqual([state.logins, state.refreshes], [1, 1]);
  });

  it('renews once on a 401 to the current token, and not again for callers that sent the old one', async () => {
    const { state, session } = fakeService();
    const token = await session.accessToken();
    const [a, b] = await Promise.all([session.rejected(token), session.rejected(token)]);
    assert.deepEqual([a, b], ['access-2', 'access-2']);
    assert.equal(await session.rejected(token), 'access-2', 'a late 401 to the old token uses the new one');
    assert.deepEqual([state.logins, state.refreshes], [1, 1]);
  });

  it('logs in anew when the refresh token is spent (the chain is over)', async () => {
    const { state, session } = fakeService();
    await session.accessToken();
    state.spent.add(session.current()!.refresh_token);
    state.clock = 300_000;
    assert.equal(await session.accessToken(), 'access-2');
    assert.deepEqual([state.logins, state.refreshes], [2, 0]);
    assert.deepEqual(state.events, ['login', 'rejected:expired', 'refresh-failed', 'login']);
  });

  it('passes on a renewal failure that is not a 401, and tries again on the next call', async () => {
    let fail = true;
    let serial = 0;
    const session = new TokenSession({
      login: async () => {
        if (fail) throw Object.assign(new Error('unavailable'), { status: 503 });
        serial += 1;
        return { access_token: `a${serial}`, refresh_token: `r${serial}`, expires_in: 300 };
      },
      refresh: async () => assert.fail('nothing to refresh'),
      now: () => 0,
    });
    await assert.rejects(session.accessToken(), /unavailable/);
    fail = false;
    assert.equal(await session.accessToken(), 'a1');
  });

  it('counts the lifetime from before the request that issued the token', async () => {
    let clock = 0;
    const session = new TokenSession({
      login: async () => {
        clock += 5_000; // the login took 5 s
        return { access_token: 'a', refresh_token: 'r', expires_in: 300 };
      },
      refresh: async () => ({ access_token: 'b', refresh_token: 'r2', expires_in: 300 }),
      now: () => clock,
    });
    await session.accessToken();
    clock = 240_000;
    assert.equal(await session.accessToken(), 'b', 'renewed at 240 s after the login was asked for, not after it answered');
  });
});
