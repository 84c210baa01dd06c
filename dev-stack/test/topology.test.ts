import { mqttLogin } from './mqtt-login.ts';
import { call, countedBetween, describeLoad, sleep, steadyLoad, type Answer, type ClientRequest } from './topology-client.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import knex from 'knex';
import { startTopology, type Topology } from '@platform/dev-stack/topology';
import type { ServiceProcess } from '@platform/dev-stack/service-process';
import { createTenantWithKeys, setTenantRateLimits } from '@platform/dev-stack/tenants';

// The production shape on loopback with real processes: Patroni, a NATS cluster, two replicas of
// each service, HAProxy in front. A replica that dies or is restarted while a client sends
// requests costs the client no failed request; a tenant's rate limit is one budget over both.

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
  /** A custom value of one made-up instrument (an ISIN's shape; the provider need not know it). */
  customValue: (n: number) => ({ data: [{ instrument_id: `XS${String(n).padStart(9, '0')}0`, reference_data: { in_house_rating: 'A' } }] }),
};

/**
 * The replicas' ordeal: the first killed (SIGKILL) and started again, the second stopped (SIGTERM)
 * while only the restarted first answers, then a rolling restart of both.
 */
async function killAndRestart([first, second]: ServiceProcess[]): Promise<void> {
  await sleep(1_000);
  await first!.kill();
  await sleep(3_000);
  await first!.restart();
  // HAProxy checks every second and takes a replica back after one passed check.
  await sleep(2_500);
  await second!.stop();
  await sleep(2_500);
  await second!.restart();
  await sleep(2_500);
  for (const replica of [first!, second!]) {
    await replica.stop();
    await replica.restart();
    await sleep(2_500);
  }
}

/** `total` requests, `concurrency` at a time, as an attacker sends them: refusals are not waited out. */
async function burst(total: number, concurrency: number, request: (n: number) => Promise<Answer>): Promise<{ n: number; answer: Answer }[]> {
  const answers: { n: number; answer: Answer }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const n = next++;
        answers.push({ n, answer: await request(n) });
      }
    }),
  );
  return answers;
}

/**
 * Every refusal a 429 rate_limited or, from a replica past its capacity, a 503 unavailable (shed
 * before it was counted), each with Retry-After; nothing but acceptances and refusals. At least one
 * refusal is the rate limit's: with at most the limit accepted, that proves the budget is shared (two
 * budgets would have accepted twice the limit before refusing one request).
 */
function assertRefusals(answers: { answer: Answer }[], accepted: number): void {
  let rateLimited = 0;
  for (const { answer } of answers) {
    if (answer.status === accepted) continue;
    const expected = answer.status === 503 ? 'unavailable' : 'rate_limited';
    if (expected === 'rate_limited') {
      assert.equal(answer.status, 429, answer.text);
      rateLimited++;
    }
    assert.equal(answer.body?.code, expected, answer.text);
    const retryAfter = Number(answer.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${answer.headers.get('retry-after')}`);
  }
  assert.ok(rateLimited >= 1, "no refusal was the rate limit's");
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
    const scenario = killAndRestart(t.replicas.management);
    const request = (method: string, path: string, body?: unknown): ClientRequest => ({
      method,
      url: t.managementUrl + path,
      body,
      token,
      headers: method === 'POST' ? { 'idempotency-key': newIdempotencyKey() } : {},
    });
    // Two clients at once: one reading, one writing.
    const load = await steadyLoad([() => request('GET', `/users/${userId}`), () => request('POST', '/users/', build.user({ first_name: 'Grace' }))], scenario);
    await scenario;
    console.log(`      management: ${describeLoad(load)}`);
    assert.ok(load.requests > 0);
    assert.deepEqual(load.failures, []);
    const after = await call(`${t.managementUrl}/users/${userId}`, { token });
    assert.equal(after.status, 200, after.text);
  });

  it('a data replica killed (SIGKILL) under load costs the client no request, nor does a rolling restart (SIGTERM); HAProxy counts the requests it sent again', async () => {
    const t = topology!;
    // A tenant whose limit the load stays under, so that the client never pauses for a 429 while the replicas die.
    const db = knex({ client: 'pg', connection: t.databaseUrl, pool: { min: 0, max: 1 } });
    const tenant = await (async () => {
      try {
        const created = await createTenantWithKeys(db);
        await setTenantRateLimits(db, created.tenantId, { requests_per_minute: 1_000_000 });
        return created;
      } finally {
        await db.destroy();
      }
    })();
    const keys = { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey };
    const before = await t.proxy.serverStats();
    const scenario = killAndRestart(t.replicas.data);
    let written = 0;
    // Two clients at once: one reading the universe, one writing custom values with a key.
    const load = await steadyLoad(
      [
        () => ({ method: 'GET', url: `${t.dataUrl}/data/reference/universe/?universe_name=GLOBAL&fields=NAME&fields=CURRENCY`, headers: keys }),
        () => ({
          method: 'POST',
          url: `${t.dataUrl}/data/custom/reference/batch/`,
          body: build.customValue(written++),
          headers: { ...keys, 'idempotency-key': newIdempotencyKey() },
        }),
      ],
      scenario,
    );
    await scenario;
    const counted = countedBetween(before, await t.proxy.serverStats(), 'data');
    console.log(
      `      data: ${describeLoad(load)}; HAProxy: ${counted.map((c) => `${c.server} ${c.retries} retries, ${c.redispatches} redispatched`).join('; ')}`,
    );
    assert.ok(load.requests > 0);
    assert.deepEqual(load.failures, []);
    assert.equal(load.rateLimited, 0);
    // The failures the client never saw were absorbed by HAProxy: requests that reached a dead or
    // stopping replica were sent again, the last time to the other replica.
    const killed = counted.find((c) => c.server === t.replicas.data[0]!.name);
    assert.ok(killed, `no counters of ${t.replicas.data[0]!.name}: ${JSON.stringify(counted)}`);
    assert.ok(killed.retries > 0, JSON.stringify(counted));
    assert.ok(counted.reduce((sum, c) => sum + c.redispatches, 0) > 0, JSON.stringify(counted));
  });

  it("a tenant's rate limit is one budget over both replicas: a burst through HAProxy gets at most the limit accepted, the rest 429 (or 503 when shed) with Retry-After, and the refused change nothing", async () => {
    const t = topology!;
    const LIMIT = 20;
    const db = knex({ client: 'pg', connection: t.databaseUrl, pool: { min: 0, max: 1 } });
    try {
      // A tenant of its own, limited before its first request, so that no replica holds its former limits.
      const tenant = await createTenantWithKeys(db);
      await setTenantRateLimits(db, tenant.tenantId, { requests_per_minute: LIMIT });
      const before = await t.proxy.serverStats();

      // The data interface: custom values written by API key, each request its own instrument.
      const keys = { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey };
      const data = await burst(3 * LIMIT, 12, (n) =>
        call(`${t.dataUrl}/data/custom/reference/batch/`, { body: build.customValue(n), headers: { ...keys, 'idempotency-key': newIdempotencyKey() } }),
      );
      // The management interface: users written by the tenant's machine client (its login is not counted against it).
      const login = await call(`${t.managementUrl}/auth/login/`, { body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret } });
      assert.equal(login.status, 200, login.text);
      const management = await burst(3 * LIMIT, 12, (n) =>
        call(`${t.managementUrl}/users/`, {
          body: build.user({ last_name: `Burst ${n}` }),
          token: login.body.access_token,
          headers: { 'idempotency-key': newIdempotencyKey() },
        }),
      );

      const counted = countedBetween(before, await t.proxy.serverStats(), 'data').concat(countedBetween(before, await t.proxy.serverStats(), 'management'));
      const acceptedData = data.filter((a) => a.answer.status === 200);
      const acceptedManagement = management.filter((a) => a.answer.status === 201);
      console.log(
        `      limit ${LIMIT}/min: data ${acceptedData.length} of ${data.length} accepted, management ${acceptedManagement.length} of ${management.length}; sessions ${counted.map((c) => `${c.server} ${c.sessions}`).join(', ')}`,
      );
      // Both replicas of each service answered part of the burst.
      for (const c of counted) assert.ok(c.sessions > 0, JSON.stringify(counted));
      for (const [answers, accepted] of [
        [acceptedData, data],
        [acceptedManagement, management],
      ] as const) {
        assert.ok(answers.length >= 1 && answers.length <= LIMIT, `${answers.length} accepted of ${accepted.length}`);
      }
      assertRefusals(data, 200);
      assertRefusals(management, 201);

      // What was stored is what was accepted, and nothing of what was refused.
      const stored = await db('data_custom_reference').where({ tenant_id: tenant.tenantId }).pluck('isin');
      assert.deepEqual(stored.sort(), acceptedData.map((a) => build.customValue(a.n).data[0]!.instrument_id).sort());
      const users = await db('entities').where({ tenant_id: tenant.tenantId, type: 'users' }).select(db.raw("doc->>'last_name' as last_name"));
      assert.deepEqual(users.map((u: { last_name: string }) => u.last_name).sort(), acceptedManagement.map((a) => `Burst ${a.n}`).sort());
    } finally {
      await db.destroy();
    }
  });
});
