import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { newUlid } from '@platform/shared';
import { createTestDatabase, startOwnNats, testWorkDir, type TestDatabase } from '@platform/test-support/database';
import { testSigningKey } from '@platform/test-support/platform';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { stopProcess } from '@platform/dev-stack/processes';
import type { NatsServer } from '@platform/dev-stack/nats-server';
import { createAccessKey, createApiKey, createTenant } from '@platform/dev-stack/tenants';

// Both services as processes of their own, killed with SIGKILL while thirty paper portfolios are
// optimized and executed: the data service holding requests it took, the management service holding
// results it took and executions with the broker. After the restarts every optimization is answered,
// stored and executed exactly once, and the holdings are exactly the orders' effect.

type Json = Record<string, unknown>;
type Service = { name: string; url: string; start: () => Promise<ChildProcess> };

const PORTFOLIOS = 30;

describe('robo-advice with both services killed mid-flow', function () {
  this.timeout(180_000);
  let database: TestDatabase;
  let nats: NatsServer;
  const running = new Map<string, ChildProcess>();

  before(async () => {
    database = await createTestDatabase();
    nats = await startOwnNats();
  });
  after(async () => {
    for (const child of running.values()) await stopProcess(child, { name: 'service', signal: 'SIGKILL', graceMs: 1000, log: () => undefined });
    await nats?.stop();
    await database?.drop();
  });

  async function service(name: string, main: string, env: Record<string, string>): Promise<Service> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const start = async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', main], {
        env: {
          PATH: process.env.PATH,
          HOST: '127.0.0.1',
          PORT: String(port),
          METRICS_PORT: '0',
          DATABASE_URL: database.url,
          NATS_URL: nats.url,
          LOG_LEVEL: 'error',
          ...env,
        },
        stdio: 'ignore',
      });
      running.set(name, child);
      await waitFor(name, async () => {
        if (!(await fetch(`${url}/readyz`)).ok) throw new Error('not ready');
      });
      return child;
    };
    return { name, url, start };
  }

  it('stores one result and books one execution per optimization', async () => {
    const tenantId = `crash-${newUlid().toLowerCase()}`;
    await createTenant(database.db, { id: tenantId });
    const access = await createAccessKey(database.db, tenantId);
    const api = await createApiKey(database.db, tenantId);
    const management = await service('management', 'management-service/src/main.ts', {
      JWT_PRIVATE_KEY: await testSigningKey(),
      MIGRATE_ON_START: 'false',
      OPTIMIZER_ACK_WAIT_MS: '1000',
      // No re-sent request: what was lost in a crash must come back by redelivery.
      OPTIMIZER_RESULT_TIMEOUT_MS: '600000',
      BROKER_SIMULATED_LATENCY_MS: '300',
    });
    const data = await service('data', 'data-service/src/main.ts', {
      DUCKDB_PATH: join(testWorkDir(), `crash-${newUlid()}.duckdb`),
      REFERENCE_DIR: join(testWorkDir(), 'reference'),
      REFERENCE_RELOAD_MS: '0',
      OPTIMIZER_ACK_WAIT_MS: '1000',
    });
    await management.start();
    await data.start();

    const login = (await (
      await fetch(`${management.url}/auth/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(access) })
    ).json()) as { access_token: string };
    const headers = { authorization: `Bearer ${login.access_token}`, 'content-type': 'application/json' };
    const api$ = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
      const res = await fetch(`${management.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Json };
    };

    const universe = (await (
      await fetch(`${data.url}/data/reference/universe/?universe_name=GLOBAL&fields=INSTRUMENT_TYPE&fields=ASSET_CLASS&fields=CURRENCY`, {
        headers: { 'x-tenant-id': tenantId, 'x-api-key': api.api_key },
      })
    ).json()) as { data: Record<string, Json> };
    const etfs = (assetClass: string) =>
      Object.entries(universe.data)
        .filter(([, f]) => f.instrument_type === 'ETF' && f.currency === 'EUR' && f.asset_class === assetClass)
        .map(([isin]) => isin);
    const [equity, bonds] = [etfs('EQUITY')[0]!, etfs('FIXED_INCOME')[0]!];
    const policy = await api$('POST', '/policies/', { name: 'Crash', config: { cash_buffer: 0.02, model_portfolio: { [equity]: 0.6, [bonds]: 0.38 } } });
    assert.equal(policy.status, 201);
    const user = await api$('POST', '/users/', {});
    const ids: string[] = [];
    for (let i = 0; i < PORTFOLIOS; i++) {
      const created = await api$('POST', '/portfolios/', {
        name: `Paper ${i}`,
        owned_by_user_id: user.body.id,
        base_currency: 'EUR',
        money_type: 'PAPER_MONEY',
        config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: { policy_id: policy.body.id } },
      });
      ids.push(String(created.body.id));
    }

    const fund = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const funded = await api$('PATCH', `/portfolios/${ids[i]}`, { portfolio: { $EUR: 1000 + i } });
        assert.equal(funded.status, 200);
      }
    };
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const kill = async (s: Service) => {
      const child = running.get(s.name)!;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    };

    // 1. The data service takes requests (its consumer pulls ahead) and dies holding them: after the
    //    acknowledgement wait they go to its next incarnation.
    running.get('data')!.kill('SIGSTOP');
    await fund(0, 10);
    await pause(500);
    await kill(data);
    // 2. Its results reach a management service that takes them and dies before storing them.
    running.get('management')!.kill('SIGSTOP');
    await data.start();
    await pause(2500);
    await kill(management);
    await management.start();
    // 3. Both die again while executions are with the (slow) broker and more requests flow.
    await fund(10, 20);
    await pause(150);
    await kill(management);
    await kill(data);
    await management.start();
    await data.start();
    await fund(20, PORTFOLIOS);
    await pause(150);
    await kill(management);
    await management.start();

    const settled = async () => {
      const rows = await database.db('entities').where({ tenant_id: tenantId, type: 'optimizations' }).select('parent_id', 'doc');
      return rows.length >= PORTFOLIOS && rows.every((r: { doc: Json }) => r.doc.execution_status === 'EXECUTED') ? rows : undefined;
    };
    let optimizations: { parent_id: string; doc: Json }[] | undefined;
    for (let i = 0; i < 600 && !(optimizations = await settled()); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(optimizations, 'every optimization answered and executed after the restarts');

    // One optimization per portfolio, stored once (one version with a result, one with its execution
    // handed over, one executed), one SUCCESS event each, and ORDER transactions matching its orders once.
    assert.deepEqual(optimizations.map((o) => o.parent_id).sort(), [...ids].sort());
    for (const o of optimizations) assert.equal(o.doc.status, 'SUCCESS');
    const requests = await database.db('optimization_requests').where({ tenant_id: tenantId }).select('attempt', 'outcome');
    assert.deepEqual(
      requests.map((r: Json) => [r.attempt, r.outcome]),
      ids.map(() => [1, 'STORED']),
      'one request per optimization, its result stored once (redelivered, never re-sent)',
    );
    const events = await database
      .db('outbox')
      .where({ tenant_id: tenantId, subject: 'optimizations', action: 'status-update' })
      .count<{ n: string }[]>('* as n');
    assert.equal(Number(events[0]!.n), PORTFOLIOS, 'one optimizations.status-update per optimization');
    for (const o of optimizations) {
      const orders = o.doc.orders as Record<string, { shares: number }>;
      const booked = await database
        .db('entities')
        .where({ tenant_id: tenantId, type: 'transactions', parent_id: o.parent_id })
        .whereRaw(`doc ->> 'type' = 'ORDER'`)
        .select('doc');
      assert.equal(booked.length, Object.keys(orders).length, `one ORDER transaction per order of ${o.parent_id}`);
      const portfolio = await database.db('entities').where({ tenant_id: tenantId, type: 'portfolios', id: o.parent_id }).first('doc');
      for (const [isin, order] of Object.entries(orders)) assert.equal((portfolio.doc.portfolio as Json)[isin], order.shares, `${isin} held once`);
    }
  });
});
