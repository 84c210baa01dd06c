import { mqttLogin } from './mqtt-login.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startTopology, type Topology } from '@platform/dev-stack/topology';

// The production shape on loopback with real processes: Patroni, a NATS cluster, two replicas of
// each service, HAProxy in front. A replica that dies or is restarted while a client sends
// requests costs the client no failed request.

// The test-support package starts its platform through this one, so its helpers are not used here.
const newIdempotencyKey = () => randomUUID();
const build = {
  user: (over: Record<string, unknown> = {}) => ({ first_name: 'Ada', last_name: 'Lovelace', ...over }),
  portfolio: (ownerId: string) => ({
    name: 'Pension',
    owned_by_user_id: ownerId,
    base_currency: 'EUR',
    money_type: 'REAL_MONEY',
    config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
  }),
};

async function call(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; token?: string } = {},
): Promise<{ status: number; body: any; text: string; retryAfter: number }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const method = init.method ?? (init.body === undefined ? 'GET' : 'POST');
  const res = await fetch(url, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, retryAfter: Number(res.headers.get('retry-after') ?? '1') };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// A status a client sends again (the client package's rule): the proxy found no replica, or it failed.
const retryable = (status: number) => status === 502 || status === 503 || status === 504;

type Load = { requests: number; failures: string[]; retries: number; rateLimited: number; maxLatencyMs: number };

/**
 * A steady stream of reads and keyed writes until `until` settles, as a client sends them: a
 * failed request (no answer, or 502/503/504) is sent again up to 3 times, a POST with the same
 * Idempotency-Key, so that it takes effect once.
 */
async function steadyLoad(topology: Topology, token: string, userId: string, until: Promise<unknown>): Promise<Load> {
  const load: Load = { requests: 0, failures: [], retries: 0, rateLimited: 0, maxLatencyMs: 0 };
  let done = false;
  void until.finally(() => (done = true));
  const send = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = method === 'POST' ? { 'idempotency-key': newIdempotencyKey() } : {};
    const started = Date.now();
    let last = '';
    for (let attempt = 0; attempt < 4; attempt++) {
      if (attempt > 0) {
        load.retries++;
        await sleep(200 * attempt);
      }
      try {
        let res = await call(topology.managementUrl + path, { method, body, headers, token });
        // The tenant's rate limit answers 429 with Retry-After: the client waits that long and sends
        // again (the client package's rule), which is no failure of the topology.
        for (let limited = 0; res.status === 429 && limited < 10; limited++) {
          load.rateLimited++;
          await sleep(res.retryAfter * 1000);
          res = await call(topology.managementUrl + path, { method, body, headers, token });
        }
        if (!retryable(res.status)) {
          if (res.status >= 400) last = `${method} ${path}: ${res.status} ${res.text}`;
          else last = '';
          break;
        }
        last = `${method} ${path}: ${res.status}`;
      } catch (error) {
        last = `${method} ${path}: ${(error as Error).message}`;
      }
    }
    load.requests++;
    load.maxLatencyMs = Math.max(load.maxLatencyMs, Date.now() - started);
    if (last) load.failures.push(last);
  };
  // Two clients at once: one reading, one writing.
  const reader = async () => {
    while (!done) await send('GET', `/users/${userId}`);
  };
  const writer = async () => {
    while (!done) await send('POST', '/users/', build.user({ first_name: 'Grace' }));
  };
  await Promise.all([reader(), writer()]);
  return load;
}

describe('dev stack: the topology on one machine', function () {
  this.timeout(240_000);
  let dir: string;
  let topology: Topology | undefined;
  let token: string;
  let userId: string;
  const log = (line: string) => console.log(`      [topology] ${line}`);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'topology-'));
    topology = await startTopology({ dir, log, sample: { instruments: 50, years: 1 } });
  });

  after(async () => {
    await topology?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the demo tenant through HAProxy: a user and a portfolio on the failover database, both services ready on two replicas each, the tenant's bus login accepted on every MQTT node", async () => {
    const t = topology!;
    const login = await call(`${t.managementUrl}/auth/login/`, { body: { access_key_id: t.tenant.accessKeyId, secret_access_key: t.tenant.secret } });
    assert.equal(login.status, 200, login.text);
    token = login.body.access_token;
    const user = await call(`${t.managementUrl}/users/`, { body: build.user(), token, headers: { 'idempotency-key': newIdempotencyKey() } });
    assert.equal(user.status, 201, user.text);
    userId = user.body.id;
    const portfolio = await call(`${t.managementUrl}/portfolios/`, { body: build.portfolio(userId), token });
    assert.equal(portfolio.status, 201, portfolio.text);
    const read = await call(`${t.managementUrl}/portfolios/${portfolio.body.id}`, { token });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.owned_by_user_id, userId);
    const data = await call(`${t.dataUrl}/readyz`);
    assert.equal(data.status, 200, data.text);
    // The tenant's bus login reaches every node of the cluster; a wrong password is refused.
    assert.equal(t.mqttUrls.length, 3);
    for (const url of t.mqttUrls) assert.equal(await mqttLogin(url, t.tenant.busUsername, t.tenant.busPassword), 0, url);
    assert.equal(await mqttLogin(t.mqttUrls[0]!, t.tenant.busUsername, `${t.tenant.busPassword}x`), 5);
    assert.equal(t.replicas.management.length, 2);
    assert.equal(t.replicas.data.length, 2);
  });

  it('a management replica killed (SIGKILL) under load costs the client no request; it restarts, HAProxy takes it back, and a rolling restart (SIGTERM) costs none either', async () => {
    const t = topology!;
    const [first, second] = t.replicas.management;
    const scenario = (async () => {
      await sleep(1_000);
      await first!.kill();
      await sleep(3_000);
      await first!.restart();
      // HAProxy checks every second and takes a replica back after one passed check.
      await sleep(2_500);
      // Only the restarted replica is left to answer while the other is stopped (SIGTERM) and started again.
      await second!.stop();
      await sleep(2_500);
      await second!.restart();
      await sleep(2_500);
      // A rolling restart: each replica stopped (SIGTERM) and started again in turn.
      for (const replica of [first!, second!]) {
        await replica.stop();
        await replica.restart();
        await sleep(2_500);
      }
    })();
    const load = await steadyLoad(t, token, userId, scenario);
    await scenario;
    console.log(
      `      ${load.requests} requests (reads and keyed writes), ${load.failures.length} failed, ${load.retries} sent again by the client, ${load.rateLimited} waited out a 429, slowest ${load.maxLatencyMs} ms`,
    );
    assert.ok(load.requests > 0);
    assert.deepEqual(load.failures, []);
    const after = await call(`${t.managementUrl}/users/${userId}`, { token });
    assert.equal(after.status, 200, after.text);
  });
});
