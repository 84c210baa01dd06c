import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createLogger } from '@platform/shared';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, testSigningKey, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { createAccessKey } from '../src/admin/provisioning.ts';
import { loadManagementConfig } from '../src/config.ts';
import { startManagementService, type RunningService } from '../src/service.ts';

type Answer = Awaited<ReturnType<typeof call>>;

/** The IETF headers of an answer under a limit, parsed. */
function rateLimitOf(res: Answer): { policy: string; limit: number; remaining: number; reset: number } {
  const policy = res.headers.get('ratelimit-policy');
  const state = res.headers.get('ratelimit');
  assert.ok(policy && state, `RateLimit headers missing (status ${res.status})`);
  const match = /^limit=(\d+), remaining=(\d+), reset=(\d+)$/.exec(state);
  assert.ok(match, `RateLimit is ${state}`);
  return { policy, limit: Number(match[1]), remaining: Number(match[2]), reset: Number(match[3]) };
}

/** A 429 rate_limited with Retry-After in whole seconds within the window. */
function assertRateLimited(res: Answer, windowSeconds: number): number {
  assertProblem(res, 429, 'rate_limited');
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSeconds, `Retry-After ${res.headers.get('retry-after')}`);
  return retryAfter;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('management rate limits per credential', () => {
  let platform: TestPlatform;
  let signingKey: string;
  const env = {
    RATE_LIMIT_ACCESS_KEY: '5',
    RATE_LIMIT_USER: '3',
    RATE_LIMIT_ADDRESS: '10000',
    TOKEN_REVOCATION_CHECK_MS: '0',
    METRICS_PORT: '0',
  };
  const url = (path: string) => platform.managementUrl + path;

  before(async function () {
    this.timeout(60_000);
    signingKey = await testSigningKey();
    platform = await startTestPlatform({ ...env, JWT_PRIVATE_KEY: signingKey });
  });
  after(() => platform?.stop());

  const tokenOf = async (accessKeyId: string, secret: string, base = platform.managementUrl) => {
    const res = await call(`${base}/auth/login/`, { body: { access_key_id: accessKeyId, secret_access_key: secret } });
    assert.equal(res.status, 200, res.text);
    return res.body.access_token as string;
  };
  const userCount = async (token: string) => {
    const res = await call(url('/users/'), { token });
    assert.equal(res.status, 200, res.text);
    return res.body.results.length as number;
  };

  it('counts each access key: headers on every answer, then 429 with Retry-After; a refused POST changes nothing', async () => {
    const tenant = await platform.tenant();
    const token = await tokenOf(tenant.accessKeyId, tenant.secret);
    for (let i = 1; i <= 4; i++) {
      const res = await call(url('/users/'), { token });
      assert.equal(res.status, 200, res.text);
      const state = rateLimitOf(res);
      assert.equal(state.policy, '5;w=60');
      assert.deepEqual([state.limit, state.remaining], [5, 5 - i]);
      assert.ok(state.reset >= 1 && state.reset <= 60);
    }
    // A 404 is counted and carries the headers too.
    const missing = await call(url('/users/U01J00000000000000000000000'), { token });
    assertProblem(missing, 404, 'not_found');
    assert.equal(rateLimitOf(missing).remaining, 0);

    const refused = await call(url('/users/'), { token, body: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' } });
    assertRateLimited(refused, 60);
    assert.equal(rateLimitOf(refused).remaining, 0);
    // Another access key of the same tenant has a budget of its own, and sees that nothing was created.
    const other = await createAccessKey(platform.database.db, tenant.tenantId);
    assert.equal(await userCount(await tokenOf(other.access_key_id, other.secret_access_key)), 0);
  });

  it("counts each end user's tokens apart from the machine client's and from other users", async () => {
    const tenant = await platform.tenant();
    const machine = await tokenOf(tenant.accessKeyId, tenant.secret);
    const users: string[] = [];
    for (const name of ['ada', 'bob']) {
      const res = await call(url('/users/'), { token: machine, body: { first_name: name, last_name: 'L', email: `${name}@example.com` } });
      assert.equal(res.status, 201, res.text);
      users.push(res.body.id);
    }
    const userToken = async (userId: string) => {
      const res = await call(url('/auth/user-token/'), { token: machine, body: { user_id: userId } });
      assert.equal(res.status, 200, res.text);
      return res.body.access_token as string;
    };
    const ada = await userToken(users[0]!);
    const bob = await userToken(users[1]!);
    for (let i = 1; i <= 3; i++) {
      const res = await call(url(`/users/${users[0]}`), { token: ada });
      assert.equal(res.status, 200, res.text);
      assert.equal(rateLimitOf(res).policy, '3;w=60');
      assert.equal(rateLimitOf(res).remaining, 3 - i);
    }
    assertRateLimited(await call(url(`/users/${users[0]}`), { token: ada }), 60);
    const bobs = await call(url(`/users/${users[1]}`), { token: bob });
    assert.equal(bobs.status, 200, bobs.text);
    assert.equal(rateLimitOf(bobs).remaining, 2);
  });

  it("applies a tenant's own limit set with the CLI, and never another tenant's", async () => {
    const limited = await platform.tenant();
    const neighbour = await platform.tenant();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'cli/src/main.ts', 'tenant', 'set-limits', limited.tenantId, '--requests-per-minute', '2'],
      { env: { ...process.env, DATABASE_URL: platform.database.url } },
    );
    assert.deepEqual(JSON.parse(stdout), { tenant: limited.tenantId, rate_limits: { requests_per_minute: 2 } });

    const token = await tokenOf(limited.accessKeyId, limited.secret);
    const neighbourToken = await tokenOf(neighbour.accessKeyId, neighbour.secret);
    for (let i = 0; i < 2; i++) assert.equal(rateLimitOf(await call(url('/users/'), { token })).policy, '2;w=60');
    assertRateLimited(await call(url('/users/'), { token }), 60);
    // The neighbour keeps the service's default and its whole budget.
    const res = await call(url('/users/'), { token: neighbourToken });
    assert.equal(res.status, 200);
    assert.deepEqual([rateLimitOf(res).policy, rateLimitOf(res).remaining], ['5;w=60', 4]);

    // `default` restores the service's setting.
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'cli/src/main.ts', 'tenant', 'set-limits', limited.tenantId, '--requests-per-minute', 'default'],
      {
        env: { ...process.env, DATABASE_URL: platform.database.url },
      },
    );
    const restored = await call(url('/users/'), { token });
    assert.equal(restored.status, 200, restored.text);
    assert.equal(rateLimitOf(restored).policy, '5;w=60');
  });

  it('shares one budget between two replicas on one database', async function () {
    this.timeout(30_000);
    const replica: RunningService = await startManagementService(
      loadManagementConfig({
        // In the tests' event loop, like the test platform's services (test-support/src/platform.ts).
        OVERLOAD_SHEDDING: 'false',
        ...env,
        HOST: '127.0.0.1',
        PORT: '0',
        DATABASE_URL: platform.database.url,
        NATS_URL: platform.natsUrl,
        JWT_PRIVATE_KEY: signingKey,
        MIGRATE_ON_START: 'false',
        OUTBOX_RELAY: 'false',
        EVENT_FORWARDERS: 'false',
        OPTIMIZER_RESULTS: 'false',
        BROKER_SETTLEMENT: 'false',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      }),
      createLogger('test', process.env.LOG_LEVEL ?? 'error'),
    );
    try {
      const tenant = await platform.tenant();
      const token = await tokenOf(tenant.accessKeyId, tenant.secret);
      const remaining: number[] = [];
      for (const base of [platform.managementUrl, replica.url, platform.managementUrl, replica.url, platform.managementUrl]) {
        const res = await call(`${base}/users/`, { token });
        assert.equal(res.status, 200, res.text);
        remaining.push(rateLimitOf(res).remaining);
      }
      assert.deepEqual(remaining, [4, 3, 2, 1, 0]);
      assertRateLimited(await call(`${replica.url}/users/`, { token }), 60);
      assertRateLimited(await call(url('/users/'), { token }), 60);
    } finally {
      await replica.stop();
    }
  });

  it('never limits /livez, /readyz nor the JWKS', async () => {
    for (let i = 0; i < 12; i++) {
      for (const path of ['/livez', '/readyz', '/.well-known/jwks.json']) {
        const res = await call(url(path));
        assert.equal(res.status, 200, `${path}: ${res.text}`);
        assert.equal(res.headers.get('ratelimit'), null);
        assert.equal(res.headers.get('ratelimit-policy'), null);
      }
    }
  });
});

describe('management rate limits on the token endpoints', () => {
  let platform: TestPlatform;
  const url = (path: string) => platform.managementUrl + path;
  const login = (accessKeyId: string, secret: string) => call(url('/auth/login/'), { body: { access_key_id: accessKeyId, secret_access_key: secret } });

  describe('per client address', () => {
    before(async function () {
      this.timeout(60_000);
      platform = await startTestPlatform({ METRICS_PORT: '0', RATE_LIMIT_ADDRESS: '4', LOGIN_FAILURES_FREE: '100', LOGIN_ADDRESS_FAILURES_FREE: '100' });
    });
    after(() => platform?.stop());

    it('counts every call from one address to the token endpoints, right or wrong, across keys and tenants', async () => {
      const a = await platform.tenant();
      const b = await platform.tenant();
      const first = await login(a.accessKeyId, a.secret);
      assert.equal(first.status, 200);
      assert.deepEqual([rateLimitOf(first).policy, rateLimitOf(first).remaining], ['4;w=60', 3]);
      assertProblem(await login(b.accessKeyId, 'wrong'), 401, 'unauthenticated');
      const refreshed = await call(url('/auth/refresh-token/'), { body: { refresh_token: first.body.refresh_token } });
      assert.equal(refreshed.status, 200, refreshed.text);
      assert.equal(rateLimitOf(refreshed).remaining, 1);
      assert.equal((await login(b.accessKeyId, b.secret)).status, 200);
      const issued = async () =>
        (
          await platform.database.db.raw(
            'select (select count(*) from refresh_tokens)::int as tokens, (select count(*) from refresh_tokens where used_at is null)::int as unspent',
          )
        ).rows[0];
      const before = await issued();
      assertRateLimited(await login(a.accessKeyId, a.secret), 60);
      // A refused refresh spends nothing and issues nothing.
      const refused = await call(url('/auth/refresh-token/'), { body: { refresh_token: refreshed.body.refresh_token } });
      assertRateLimited(refused, 60);
      assert.equal(rateLimitOf(refused).remaining, 0);
      assert.deepEqual(await issued(), before);
      // With no trusted proxy a forged X-Forwarded-For is not believed: the same address, still refused.
      const forged = { body: { access_key_id: a.accessKeyId, secret_access_key: a.secret }, headers: { 'x-forwarded-for': '203.0.113.9' } };
      assertRateLimited(await call(url('/auth/login/'), forged), 60);
    });
  });

  describe('behind a trusted proxy (TRUSTED_PROXIES)', () => {
    before(async function () {
      this.timeout(60_000);
      platform = await startTestPlatform({ METRICS_PORT: '0', RATE_LIMIT_ADDRESS: '2', TRUSTED_PROXIES: '1' });
    });
    after(() => platform?.stop());

    it('counts the address the proxy reports, each client its own budget', async () => {
      const a = await platform.tenant();
      const from = (address: string) =>
        call(url('/auth/login/'), { body: { access_key_id: a.accessKeyId, secret_access_key: a.secret }, headers: { 'x-forwarded-for': address } });
      assert.equal((await from('203.0.113.1')).status, 200);
      assert.equal((await from('203.0.113.1')).status, 200);
      assertRateLimited(await from('203.0.113.1'), 60);
      const other = await from('203.0.113.2');
      assert.equal(other.status, 200, 'another client behind the same proxy has its own budget');
      assert.equal(rateLimitOf(other).remaining, 1);
    });
  });

  describe('failed logins', () => {
    let tenant: TestTenant;
    before(async function () {
      this.timeout(60_000);
      platform = await startTestPlatform({
        METRICS_PORT: '0',
        RATE_LIMIT_ADDRESS: '10000',
        LOGIN_FAILURES_FREE: '2',
        LOGIN_ADDRESS_FAILURES_FREE: '12',
        LOGIN_BLOCK_SECONDS: '1',
        LOGIN_BLOCK_MAX_SECONDS: '2',
      });
      tenant = await platform.tenant();
    });
    after(() => platform?.stop());

    const loginFrom = (from: string, accessKeyId: string, secret: string) =>
      call(url('/auth/login/'), { body: { access_key_id: accessKeyId, secret_access_key: secret }, from });
    const refreshTokens = async () => (await platform.database.db.raw('select count(*)::int as n from refresh_tokens')).rows[0].n as number;
    /** The login counters (failures, blocks) of one access key from one address. */
    const pairCounters = async (accessKeyId: string, address: string) =>
      (await platform.database.db.raw(`select key, points from rate_limits where key like 'login-%' order by key`)).rows.filter((row: { key: string }) =>
        row.key.endsWith(`:ak-addr:${accessKeyId}:${address}`),
      ) as { key: string; points: number }[];

    it('blocks an access key from one address for a short, growing time after consecutive failures; a success resets the count', async function () {
      this.timeout(20_000);
      const other = await platform.tenant();
      // Two failures are free, the third blocks the key from this address for 1 s.
      for (let i = 0; i < 3; i++) assertProblem(await login(tenant.accessKeyId, 'wrong'), 401, 'unauthenticated');
      const tokensBefore = await refreshTokens();
      // The block applies to the right secret too, unchecked: no token is issued.
      const blocked = await login(tenant.accessKeyId, tenant.secret);
      assert.equal(assertRateLimited(blocked, 1), 1);
      assert.equal(rateLimitOf(blocked).remaining, 0);
      assert.equal(await refreshTokens(), tokensBefore);
      // Only that key from that address: another tenant's key logs in from it, the same key from another address.
      assert.equal((await login(other.accessKeyId, other.secret)).status, 200);
      assert.equal((await loginFrom('127.0.3.1', tenant.accessKeyId, tenant.secret)).status, 200);
      await sleep(1100);
      // The next failure blocks for twice as long.
      assertProblem(await login(tenant.accessKeyId, 'wrong'), 401, 'unauthenticated');
      assert.equal(assertRateLimited(await login(tenant.accessKeyId, tenant.secret), 2), 2);
      await sleep(2100);
      // The rightful client gets in, and its success resets the count: two failures are free again.
      assert.equal((await login(tenant.accessKeyId, tenant.secret)).status, 200);
      for (let i = 0; i < 2; i++) assertProblem(await login(tenant.accessKeyId, 'wrong'), 401, 'unauthenticated');
      assert.equal((await login(tenant.accessKeyId, tenant.secret)).status, 200);
    });

    it("does not let a stranger's wrong logins from other addresses lock the rightful client out", async function () {
      this.timeout(20_000);
      const victim = await platform.tenant();
      const rightful = '127.0.1.1';
      const strangers = ['127.0.1.2', '127.0.1.3', '127.0.1.4', '127.0.1.5', '127.0.1.6'];
      // Three rounds of the flood; between them the rightful client's login is answered at once.
      for (let round = 0; round < 3; round++) {
        for (const answer of await Promise.all(strangers.map((from) => loginFrom(from, victim.accessKeyId, 'wrong')))) {
          assertProblem(answer, 401, 'unauthenticated');
        }
        const ok = await loginFrom(rightful, victim.accessKeyId, victim.secret);
        assert.equal(ok.status, 200, ok.text);
        assert.equal(typeof ok.body.access_token, 'string');
      }
      // Each stranger's address is now blocked for that key, right secret or wrong, and nothing is issued.
      const tokensBefore = await refreshTokens();
      for (const from of strangers) {
        assert.equal(assertRateLimited(await loginFrom(from, victim.accessKeyId, 'wrong'), 1), 1);
        assertRateLimited(await loginFrom(from, victim.accessKeyId, victim.secret), 1);
      }
      assert.equal(await refreshTokens(), tokensBefore);
      // The flood counted only its own pairs: the rightful client's has no counter, a new address's first failure is free.
      assert.deepEqual(await pairCounters(victim.accessKeyId, rightful), []);
      assert.deepEqual(
        (await pairCounters(victim.accessKeyId, strangers[0]!)).map((row) => row.key.split(':')[0]),
        ['login-block', 'login-fail'],
      );
      assertProblem(await loginFrom('127.0.1.7', victim.accessKeyId, 'wrong'), 401, 'unauthenticated');
      assert.equal((await loginFrom(rightful, victim.accessKeyId, victim.secret)).status, 200);
    });

    it('replays the lock-out attack: about 10 wrong logins a second from 10 addresses, the rightful client gets in every time', async function () {
      this.timeout(20_000);
      const victim = await platform.tenant();
      const strangers = Array.from({ length: 10 }, (_, i) => `127.0.2.${i + 2}`);
      const flood: Promise<Answer>[] = [];
      const rightful: Answer[] = [];
      // Three seconds: a wrong login every 100 ms, round the addresses; the rightful client every 500 ms from its own.
      for (let tick = 0; tick < 30; tick++) {
        flood.push(loginFrom(strangers[tick % strangers.length]!, victim.accessKeyId, 'wrong'));
        if (tick % 5 === 2) rightful.push(await loginFrom('127.0.2.1', victim.accessKeyId, victim.secret));
        await sleep(100);
      }
      const stranger = await Promise.all(flood);
      assert.deepEqual(
        rightful.map((res) => res.status),
        rightful.map(() => 200),
      );
      assert.equal(rightful.length, 6);
      for (const res of stranger) assert.ok([401, 429].includes(res.status), `a stranger's login answered ${res.status}`);
    });

    it('blocks an address that fails with many keys, and right logins do not count', async function () {
      this.timeout(20_000);
      const fresh = await platform.tenant();
      // Earlier failures of this address in the window: 3 + 1 + 2 = 6; right logins add none.
      for (let i = 0; i < 5; i++) assert.equal((await login(fresh.accessKeyId, fresh.secret)).status, 200);
      for (let i = 0; i < 6; i++) assertProblem(await login(`A01J0000000000000000000${String(i).padStart(3, '0')}`, 'x'), 401, 'unauthenticated');
      // The 13th failure of the address blocks every login from it.
      assertProblem(await login('A01J0000000000000000000999', 'x'), 401, 'unauthenticated');
      assertRateLimited(await login(fresh.accessKeyId, fresh.secret), 2);
    });
  });
});
