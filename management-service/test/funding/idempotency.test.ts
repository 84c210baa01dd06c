import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { testNatsUrl } from '@platform/test-support/database';
import { assertProblem, call } from '@platform/test-support/http';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, testSigningKey, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { deleteIdempotencyKeys } from '../../src/store/retention.ts';

describe('Idempotency-Key (docs/adr/0010-idempotency-key.md)', function () {
  this.timeout(90_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: Api;
  let owner: string;

  const newPortfolio = async () => (await api('POST', '/portfolios/', build.portfolio(owner))).body.id as string;
  const depositBody = (portfolio: string, amount = '10.00', externalId = `cb-${Math.random().toString(36).slice(2)}`) => ({
    data: { amount, currency: 'EUR', portfolio, external_id: externalId },
  });
  const cash = async (id: string) => (await api('GET', `/portfolios/${id}`)).body.portfolio.$EUR;
  const transactions = async (id: string) => (await api('GET', `/portfolios/${id}/transactions/?limit=100`)).body.count;
  const keyRows = (key: string) => platform.database.db('idempotency_keys').where({ key });

  /** Holds the portfolio's row lock from another connection until release(): a deposit then stays in flight. */
  async function holdPortfolio(id: string) {
    const trx = await platform.database.db.transaction();
    await trx.raw('select 1 from entities where id = ? for update', [id]);
    return { release: () => trx.rollback() };
  }
  const waitingOnLocks = async () => Number((await platform.database.db.raw('select count(*) as n from pg_locks where not granted')).rows[0].n);

  before(async () => {
    platform = await startTestPlatform({ IDEMPOTENCY_WAIT_MS: '300' });
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
    owner = (await api('POST', '/users/', build.user())).body.id;
  });
  after(() => platform.stop());

  it('replays the stored status, headers and body with Idempotency-Replayed: true, and books once', async () => {
    const id = await newPortfolio();
    const body = depositBody(id);
    const first = await api('POST', '/events/deposit/', body, { 'Idempotency-Key': 'replay-1' });
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotency-replayed'), null);
    for (const path of ['/events/deposit/', '/events/deposit']) {
      const again = await api('POST', path, body, { 'Idempotency-Key': 'replay-1' });
      assert.equal(again.status, 201);
      assert.equal(again.headers.get('idempotency-replayed'), 'true');
      assert.equal(again.headers.get('location'), first.headers.get('location'));
      assert.equal(again.text, first.text);
    }
    // Key order of the body does not matter: the hash is of the canonical body.
    const reordered = await api(
      'POST',
      '/events/deposit/',
      { data: { external_id: body.data.external_id, portfolio: id, currency: 'EUR', amount: '10.00' } },
      { 'Idempotency-Key': 'replay-1' },
    );
    assert.equal(reordered.headers.get('idempotency-replayed'), 'true');
    assert.deepEqual([await cash(id), await transactions(id)], [10, 1]);
  });

  it('answers 422 idempotency_key_reused for the same key with another body, and changes nothing', async () => {
    const id = await newPortfolio();
    await api('POST', '/events/deposit/', depositBody(id, '10.00', 'reuse-a'), { 'Idempotency-Key': 'reuse-1' });
    const res = await api('POST', '/events/deposit/', depositBody(id, '20.00', 'reuse-b'), { 'Idempotency-Key': 'reuse-1' });
    assertProblem(res, 422, 'idempotency_key_reused');
    assert.deepEqual(res.body.errors[0].loc, ['header', 'Idempotency-Key']);
    assert.deepEqual([await cash(id), await transactions(id)], [10, 1]);
  });

  it('scopes keys by tenant, method and path', async () => {
    const user = await api('POST', '/users/', build.user(), { 'Idempotency-Key': 'scope-1' });
    assert.equal(user.status, 201);
    const id = await newPortfolio();
    const dep = await api('POST', '/events/deposit/', depositBody(id), { 'Idempotency-Key': 'scope-1' });
    assert.equal(dep.status, 201);
    assert.equal(dep.headers.get('idempotency-replayed'), null);
    const other = await machineApi(platform, await platform.tenant());
    const theirs = await other('POST', '/users/', build.user(), { 'Idempotency-Key': 'scope-1' });
    assert.equal(theirs.status, 201);
    assert.notEqual(theirs.body.id, user.body.id);
    const mine = await api('POST', '/users/', build.user(), { 'Idempotency-Key': 'scope-1' });
    assert.deepEqual([mine.headers.get('idempotency-replayed'), mine.body.id], ['true', user.body.id]);
  });

  it('stores nothing for a request that fails: the retry runs again', async () => {
    const id = await newPortfolio();
    await api('PATCH', `/portfolios/${id}`, { config: { manager_settings: { active: false } } });
    assertProblem(await api('POST', '/events/deposit/', depositBody(id, '5', 'fail-1'), { 'Idempotency-Key': 'fail-1' }), 409, 'state_conflict');
    assert.equal((await keyRows('fail-1')).length, 0);
    await api('PATCH', `/portfolios/${id}`, { config: { manager_settings: { active: true } } });
    const retry = await api('POST', '/events/deposit/', depositBody(id, '5', 'fail-1'), { 'Idempotency-Key': 'fail-1' });
    assert.equal(retry.status, 201);
    assert.equal(await cash(id), 5);
  });

  it('answers 409 idempotency_in_flight with Retry-After while the first request runs, then replays it', async () => {
    const id = await newPortfolio();
    const body = depositBody(id);
    const lock = await holdPortfolio(id);
    const first = api('POST', '/events/deposit/', body, { 'Idempotency-Key': 'flight-1' });
    await waitFor('deposit waiting on the portfolio', async () => assert.ok((await waitingOnLocks()) > 0));
    const second = await api('POST', '/events/deposit/', body, { 'Idempotency-Key': 'flight-1' });
    assertProblem(second, 409, 'idempotency_in_flight');
    assert.equal(second.headers.get('retry-after'), '1');
    await lock.release();
    assert.equal((await first).status, 201);
    const third = await api('POST', '/events/deposit/', body, { 'Idempotency-Key': 'flight-1' });
    assert.equal(third.headers.get('idempotency-replayed'), 'true');
    assert.deepEqual([await cash(id), await transactions(id)], [10, 1]);
  });

  it('turns 50 concurrent identical deposits with one key into one booking and 50 identical answers', async () => {
    const slow = await startTestPlatform({ IDEMPOTENCY_WAIT_MS: '20000' });
    try {
      const t = await slow.tenant();
      const client = await machineApi(slow, t);
      const user = (await client('POST', '/users/', build.user())).body.id;
      const id = (await client('POST', '/portfolios/', build.portfolio(user))).body.id;
      const body = depositBody(id, '12.34');
      const answers = await Promise.all(Array.from({ length: 50 }, () => client('POST', '/events/deposit/', body, { 'Idempotency-Key': 'same-50' })));
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(50).fill(201),
      );
      assert.equal(new Set(answers.map((a) => a.text)).size, 1);
      assert.equal(answers.filter((a) => a.headers.get('idempotency-replayed') === null).length, 1);
      const p = (await client('GET', `/portfolios/${id}`)).body;
      assert.deepEqual([p.portfolio.$EUR, p.version], [12.34, 2]);
      assert.equal((await client('GET', `/portfolios/${id}/transactions/`)).body.count, 1);
    } finally {
      await slow.stop();
    }
  });

  it('forgets keys after their retention: the retention job removes them, and an expired key runs afresh', async () => {
    const id = await newPortfolio();
    await api('POST', '/events/deposit/', depositBody(id, '1', 'exp-a'), { 'Idempotency-Key': 'expire-1' });
    await api('POST', '/events/deposit/', depositBody(id, '1', 'exp-b'), { 'Idempotency-Key': 'expire-2' });
    await platform.database
      .db('idempotency_keys')
      .whereIn('key', ['expire-1', 'expire-2'])
      .update({ expires_at: platform.database.db.raw(`now() - interval '1 second'`) });
    const rerun = await api('POST', '/events/deposit/', depositBody(id, '2', 'exp-c'), { 'Idempotency-Key': 'expire-1' });
    assert.deepEqual([rerun.status, rerun.headers.get('idempotency-replayed')], [201, null]);
    assert.ok((await deleteIdempotencyKeys(platform.database.db, new Date(), 1000)) >= 1);
    assert.deepEqual(
      (await platform.database.db('idempotency_keys').whereIn('key', ['expire-1', 'expire-2']).select('key')).map((r) => r.key),
      ['expire-1'],
    );
    assert.equal(await cash(id), 4);
  });

  it('never books twice when the service is killed mid-request and the client retries with the same key', async () => {
    const id = await newPortfolio();
    const body = depositBody(id, '77.70');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'management-service/src/main.ts'], {
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: '0',
        DATABASE_URL: platform.database.url,
        NATS_URL: testNatsUrl(),
        JWT_PRIVATE_KEY: await testSigningKey(),
        MIGRATE_ON_START: 'false',
        LOG_LEVEL: 'error',
      },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitFor('management service', async () => assert.ok((await fetch(`${url}/readyz`)).ok));
      const login = await call(`${url}/auth/login/`, { body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret } });
      const lock = await holdPortfolio(id);
      const inFlight = call(`${url}/events/deposit/`, { body, token: login.body.access_token, headers: { 'Idempotency-Key': 'crash-1' } }).catch(
        (error: Error) => error,
      );
      await waitFor('deposit in flight', async () => assert.ok((await waitingOnLocks()) > 0));
      child.kill('SIGKILL');
      assert.ok((await inFlight) instanceof Error);
      await lock.release();
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    // The killed request's transaction rolled back with its connection: no effect and no key.
    await waitFor('killed session gone', async () => {
      const { rows } = await platform.database.db.raw(
        `select count(*) as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`,
      );
      assert.equal(Number(rows[0].n) + (await waitingOnLocks()), 0);
    });
    assert.equal((await keyRows('crash-1')).length, 0);
    assert.deepEqual([await cash(id), await transactions(id)], [undefined, 0]);
    const retry = await api('POST', '/events/deposit/', body, { 'Idempotency-Key': 'crash-1' });
    assert.equal(retry.status, 201);
    const again = await api('POST', '/events/deposit/', body, { 'Idempotency-Key': 'crash-1' });
    assert.deepEqual([again.status, again.headers.get('idempotency-replayed'), again.text], [201, 'true', retry.text]);
    assert.deepEqual([await cash(id), await transactions(id)], [77.7, 1]);
  });
});
