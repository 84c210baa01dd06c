import assert from 'node:assert/strict';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';

type Answer = Awaited<ReturnType<typeof call>>;

/** The answer of a shed request: 503 unavailable, told to retry in a second. */
function assertShed(res: Answer): void {
  assertProblem(res, 503, 'unavailable');
  assert.equal(res.headers.get('retry-after'), '1');
  assert.match(res.body.detail, /over its capacity/);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The value of a metric's series whose labels include `labels` (0 when absent). */
function metricValue(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

// docs/adr/0062-overload-shedding.md: one connection in the pool, held by a read that waits for a
// lock the test takes, so that every other request waits for that connection: the wait rises over
// OVERLOAD_DB_WAIT_MS, the limit falls under the requests in flight, and the excess is shed.
describe('management service past its capacity', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: Api & { token: string };
  let userId: string;

  before(async () => {
    platform = await startTestPlatform({
      OVERLOAD_SHEDDING: 'true',
      OVERLOAD_DB_WAIT_MS: '20',
      // The 20 reads held below are more than twice this floor, so the limit may fall under them.
      OVERLOAD_MIN_LIMIT: '4',
      DATABASE_POOL_MAX: '1',
      // Tokens and limits checked without the database while the pool is held.
      TOKEN_REVOCATION_CHECK_MS: '60000',
      RATE_LIMIT_ACCESS_KEY: '0',
    });
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
    const user = await api('POST', '/users/', build.user());
    assert.equal(user.status, 201, user.text);
    userId = user.body.id;
  });
  after(() => platform?.stop());

  const userCount = async () => {
    const row = await platform.database.db('entities').where({ tenant_id: tenant.tenantId, type: 'users' }).count<{ count: string }[]>('* as count');
    return Number(row[0]!.count);
  };
  /** A GET as the machine client, given up (rejected) after 300 ms. */
  const quickCall = async (path: string): Promise<Answer> => {
    const res = await fetch(platform.managementUrl + path, { headers: { authorization: `Bearer ${api.token}` }, signal: AbortSignal.timeout(300) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
  };
  const metricsText = async () => (await fetch(`${platform.metricsUrls.management}/metrics`)).text();
  const idempotencyRows = async (key: string) =>
    Number((await platform.database.db('idempotency_keys').where({ key }).count<{ count: string }[]>('* as count'))[0]!.count);

  it('answers the excess at once with 503 unavailable and Retry-After, changes nothing, keeps /livez and /readyz, and serves what it admitted', async () => {
    const usersBefore = await userCount();
    assert.equal(usersBefore, 1);
    const lock = await platform.database.db.transaction();
    let admitted: Promise<Answer>[] = [];
    let readyz: Promise<Answer> | undefined;
    try {
      await lock.raw('lock table entities in access exclusive mode');
      // 20 reads in flight: the first holds the pool's only connection, waiting for the lock; the others wait for that connection.
      admitted = Array.from({ length: 20 }, () => api('GET', `/users/${userId}`));
      // The wait for the connection grows with every sample; once the limit is under the 20 in
      // flight, a request is shed. (GET /metrics cannot tell meanwhile: its backlog gauges wait for
      // the pool too.) A request still admitted waits, and is given up after 300 ms.
      let shed: Answer | undefined;
      for (let i = 0; i < 50 && !shed; i++) {
        shed = await quickCall('/users/').catch(() => undefined);
        if (!shed) await sleep(50);
      }
      assert.ok(shed, 'a request was shed while the pool was held');
      assertShed(shed);
      assert.doesNotMatch(shed.text, /pool|knex|postgres|event.loop|limit|in flight/i, 'nothing internal in the answer');

      // A write with a body is shed before its body is read or anything is stored.
      const key = `overload-${tenant.tenantId}`;
      const write = await api('POST', '/users/', build.user(), { 'idempotency-key': key });
      assertShed(write);

      // The checks of the load balancer and the orchestrator are never shed.
      const livez = await call(`${platform.managementUrl}/livez`);
      assert.equal(livez.status, 200, livez.text);
      readyz = call(`${platform.managementUrl}/readyz`);
      const early = await Promise.race([readyz.then((r) => r.status), sleep(300).then(() => 'waiting')]);
      assert.equal(early, 'waiting', '/readyz is not shed: it waits for the connection like the reads before it');

      await lock.commit();
      // Those of the 20 that came before the limit fell were admitted and are served; the later ones were shed.
      const answers = await Promise.all(admitted);
      const served = answers.filter((a) => a.status === 200).length;
      for (const a of answers.filter((a) => a.status !== 200)) assertShed(a);
      assert.ok(served >= 1, 'the admitted requests are served');
      assert.equal((await readyz).status, 200);
      assert.equal(await userCount(), usersBefore, 'the shed POST stored no user');
      assert.equal(await idempotencyRows(key), 0, 'nor its Idempotency-Key');
      const metrics = await metricsText();
      assert.ok(metricValue(metrics, 'http_requests_shed_total', 'reason="database"') >= 2, 'shed requests counted by their reason');
      assert.equal(metricValue(metrics, 'http_requests_shed_total', 'reason="event_loop"'), 0);
    } finally {
      if (!lock.isCompleted()) await lock.rollback();
      await Promise.allSettled([...admitted, readyz]);
    }
  });

  it('admits a burst again once the pool answers and the limit has grown back', async () => {
    let statuses: number[] = [];
    for (let i = 0; i < 50; i++) {
      const burst = await Promise.all(Array.from({ length: 10 }, () => api('GET', `/users/${userId}`)));
      for (const a of burst.filter((a) => a.status !== 200)) assertShed(a);
      statuses = burst.map((a) => a.status);
      if (statuses.every((s) => s === 200)) break;
      await sleep(100);
    }
    assert.deepEqual(
      statuses,
      statuses.map(() => 200),
    );
  });

  it('the data service sheds too: its limit is measured', async () => {
    const metrics = await (await fetch(`${platform.metricsUrls.data}/metrics`)).text();
    assert.ok(metricValue(metrics, 'http_admission_limit', 'service="data-service"') >= 1, 'the data service has an admission limit');
  });
});
