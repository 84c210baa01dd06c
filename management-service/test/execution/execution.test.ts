import assert from 'node:assert/strict';
import knex from 'knex';
import { createLogger } from '@platform/shared';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import type { Broker } from '../../src/broker/broker.ts';
import { simulatedBroker } from '../../src/broker/simulated.ts';
import { startBrokerSettlement } from '../../src/jobs/broker-settlement.ts';
import {
  ISIN_A,
  ISIN_B,
  ISIN_C,
  account,
  countingBroker,
  executeOptimization,
  insertOptimization,
  instructionsOf,
  openInstructions,
  order,
  readEntity,
  recordingLogger,
  settleAll,
} from './fixtures.ts';
import { seededRandom } from '@platform/test-support/random';

type Transaction = {
  type: string;
  status: string;
  quantity: string;
  unit_price: string | null;
  currency: string;
  instrument_id: string;
  optimization_id: string | null;
};

describe('execution of optimizations through the broker (docs/adr/0022-execution-and-withdrawals.md)', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let service: { api: Api; tenantId: string; owner: string };
  let client: { api: Api; tenantId: string; owner: string };

  // Robo-advised portfolios without a policy: the optimizer is never asked, so only the optimizations stored here execute.
  const portfolio = async (t: typeof service, holdings: Record<string, number>, over: Record<string, unknown> = {}) => {
    const res = await t.api('POST', '/portfolios/', build.roboPortfolio(t.owner, {}, { portfolio: holdings, brokerage_account: account, ...over }));
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  const get = async (t: typeof service, id: string) => (await t.api('GET', `/portfolios/${id}`)).body;
  const orderTransactions = async (t: typeof service, id: string): Promise<Transaction[]> =>
    ((await t.api('GET', `/portfolios/${id}/transactions/?limit=100`)).body.results as Transaction[]).filter((x) => x.type === 'ORDER');
  const outboxCount = async (id: string) => Number((await platform.database.db('outbox').count('* as n').where({ entity_id: id }))[0]!.n);
  const tenant = async (brokerIntegration: 'CLIENT' | 'SERVICE') => {
    const t = await platform.tenant(undefined, { brokerIntegration });
    const api = await machineApi(platform, t);
    return { api, tenantId: t.tenantId, owner: (await api('POST', '/users/', build.user())).body.id as string };
  };

  before(async () => {
    platform = await startTestPlatform({ BROKER_SETTLEMENT: 'false' });
    service = await tenant('SERVICE');
    client = await tenant('CLIENT');
  });
  after(() => platform.stop());

  it('books a filled execution: one SETTLED ORDER transaction per ISIN, holdings and cash exact, EXECUTED, one portfolio version', async () => {
    const id = await portfolio(service, { [ISIN_A]: 2, [ISIN_B]: 5, $EUR: 1000 });
    const before = await get(service, id);
    const optimization = await insertOptimization(platform.database.db, service.tenantId, id, {
      [ISIN_A]: order(3, 33.33, 0.1),
      [ISIN_B]: order(-5, 7, 0.2),
      [ISIN_C]: order(0.5, 100, 0),
    });
    assert.deepEqual(await executeOptimization(platform.database.db, service.tenantId, id, optimization), {
      execution_status: 'PENDING',
      execution_detail: null,
    });
    assert.equal((await readEntity(platform.database.db, service.tenantId, 'optimizations', optimization)).doc.execution_status, 'PENDING');
    assert.deepEqual((await get(service, id)).portfolio, before.portfolio, 'nothing is booked before the broker answers');

    const { broker, orders } = countingBroker();
    await settleAll(platform, { broker });

    assert.deepEqual(
      orders.map((o) => [o.portfolioId, o.currency, o.orders]),
      [
        [
          id,
          'EUR',
          [
            { isin: ISIN_B, shares: '-5', price: '7', currency: 'EUR' },
            { isin: ISIN_A, shares: '3', price: '33.33', currency: 'EUR' },
            { isin: ISIN_C, shares: '0.5', price: '100', currency: 'EUR' },
          ],
        ],
      ],
    );
    const booked = (await orderTransactions(service, id)).map((x) => [x.instrument_id, x.status, x.quantity, x.unit_price, x.currency, x.optimization_id]);
    assert.deepEqual(
      booked.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [
        [ISIN_B, 'SETTLED', '-5', '7', 'EUR', optimization],
        [ISIN_A, 'SETTLED', '3', '33.33', 'EUR', optimization],
        [ISIN_C, 'SETTLED', '0.5', '100', 'EUR', optimization],
      ],
    );
    const after = await get(service, id);
    // 1000 − 3 × 33.33 − 0.1 + 5 × 7 − 0.2 − 0.5 × 100 = 884.71; ISIN_B reached 0 and is gone.
    assert.deepEqual(after.portfolio, { [ISIN_A]: 5, [ISIN_C]: 0.5, $EUR: 884.71 });
    assert.equal(after.version, before.version + 1);
    const executed = await readEntity(platform.database.db, service.tenantId, 'optimizations', optimization);
    assert.deepEqual([executed.doc.execution_status, executed.doc.execution_detail, executed.version], ['EXECUTED', null, 3]);
    const [instruction] = await instructionsOf(platform.database.db, id);
    assert.equal(instruction.kind, 'ORDERS');
    assert.equal(instruction.result.status, 'FILLED');
  });

  it('executes a PAPER_MONEY portfolio on the simulated broker even with CLIENT integration, never on the configured one', async () => {
    const id = await portfolio(client, { $EUR: 500 }, { money_type: 'PAPER_MONEY' });
    const optimization = await insertOptimization(platform.database.db, client.tenantId, id, { [ISIN_A]: order(4, 99.99, 1) });
    assert.deepEqual(await executeOptimization(platform.database.db, client.tenantId, id, optimization), {
      execution_status: 'PENDING',
      execution_detail: null,
    });
    const configured = countingBroker({ refuseRate: 1 });
    const paper = countingBroker();
    await settleAll(platform, { broker: configured.broker, paperBroker: paper.broker });
    assert.deepEqual([configured.sent.length, paper.sent.length], [0, 1]);
    assert.deepEqual((await get(client, id)).portfolio, { [ISIN_A]: 4, $EUR: 99.04 });
    assert.equal((await readEntity(platform.database.db, client.tenantId, 'optimizations', optimization)).doc.execution_status, 'EXECUTED');
  });

  it('leaves REAL_MONEY portfolios of CLIENT tenants to the Client Middleware: nothing queued, nothing stored', async () => {
    const id = await portfolio(client, { $EUR: 500 });
    const optimization = await insertOptimization(platform.database.db, client.tenantId, id, { [ISIN_A]: order(1, 10) });
    assert.equal(await executeOptimization(platform.database.db, client.tenantId, id, optimization), undefined);
    assert.deepEqual(await instructionsOf(platform.database.db, id), []);
    const stored = await readEntity(platform.database.db, client.tenantId, 'optimizations', optimization);
    assert.deepEqual([stored.version, stored.doc.execution_status], [1, null]);
  });

  it('queues an optimization once, and nothing for one without orders', async () => {
    const id = await portfolio(service, { $EUR: 100 });
    const optimization = await insertOptimization(platform.database.db, service.tenantId, id, { [ISIN_A]: order(1, 10) });
    assert.ok(await executeOptimization(platform.database.db, service.tenantId, id, optimization));
    assert.equal(await executeOptimization(platform.database.db, service.tenantId, id, optimization), undefined);
    const empty = await insertOptimization(platform.database.db, service.tenantId, id, {});
    assert.equal(await executeOptimization(platform.database.db, service.tenantId, id, empty), undefined);
    assert.equal((await instructionsOf(platform.database.db, id)).length, 1);
    await settleAll(platform, { broker: countingBroker().broker });
    assert.equal((await orderTransactions(service, id)).length, 1);
  });

  it('marks a refused execution REFUSED with the reason, books nothing and logs it', async () => {
    const id = await portfolio(service, { [ISIN_A]: 1, $EUR: 100 });
    const before = await get(service, id);
    const optimization = await insertOptimization(platform.database.db, service.tenantId, id, { [ISIN_A]: order(-1, 50), [ISIN_B]: order(2, 20, 0.5) });
    await executeOptimization(platform.database.db, service.tenantId, id, optimization);
    const events = await outboxCount(id);
    const { logger, warnings } = recordingLogger();
    await settleAll(platform, { broker: countingBroker({ refuseRate: 1 }).broker, logger });
    const refused = await readEntity(platform.database.db, service.tenantId, 'optimizations', optimization);
    assert.deepEqual([refused.doc.execution_status, refused.doc.execution_detail], ['REFUSED', 'simulated refusal of the orders']);
    const after = await get(service, id);
    assert.deepEqual([after.version, after.portfolio], [before.version, before.portfolio]);
    assert.deepEqual(await orderTransactions(service, id), []);
    assert.equal(await outboxCount(id), events);
    assert.ok(warnings.some((w) => w.meta.optimization === optimization && w.meta.reason === 'simulated refusal of the orders'));
    assert.equal((await instructionsOf(platform.database.db, id))[0].last_error, 'simulated refusal of the orders');
  });

  it('books each of 20 executions exactly once while the broker fails half of its calls', async () => {
    const ids: string[] = [];
    const optimizations: string[] = [];
    for (let i = 0; i < 20; i++) {
      const id = await portfolio(service, { [ISIN_A]: 10, $EUR: 1000 });
      ids.push(id);
      optimizations.push(
        await insertOptimization(platform.database.db, service.tenantId, id, { [ISIN_A]: order(-3, 33.33, 0.01), [ISIN_B]: order(7, 12.5, 0.02) }),
      );
      await executeOptimization(platform.database.db, service.tenantId, id, optimizations[i]!);
    }
    const { broker, sent } = countingBroker({ failureRate: 0.5, random: seededRandom(42) });
    await settleAll(platform, { broker }, { portfolios: ids, timeoutMs: 60_000 });
    assert.ok(sent.length > 25, `the broker was asked again after failures: ${sent.length} calls for 20 instructions`);
    const retried = (await platform.database.db('broker_instructions').whereIn('portfolio_id', ids).where('attempts', '>', 0)).length;
    assert.ok(retried > 0, 'some instructions failed and were retried');
    for (const [i, id] of ids.entries()) {
      const p = await get(service, id);
      // 1000 + 3 × 33.33 − 0.01 − 7 × 12.5 − 0.02 = 1012.46
      assert.deepEqual(p.portfolio, { [ISIN_A]: 7, [ISIN_B]: 7, $EUR: 1012.46 }, id);
      assert.equal(p.version, 2, id);
      assert.equal((await orderTransactions(service, id)).length, 2, id);
      assert.equal((await readEntity(platform.database.db, service.tenantId, 'optimizations', optimizations[i]!)).doc.execution_status, 'EXECUTED');
    }
  });

  it('books once when three settlement jobs race for the same instructions', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const id = await portfolio(service, { $EUR: 100 });
      ids.push(id);
      await executeOptimization(
        platform.database.db,
        service.tenantId,
        id,
        await insertOptimization(platform.database.db, service.tenantId, id, { [ISIN_C]: order(3, 33.33, 0.01) }),
      );
    }
    const { broker, sent } = countingBroker({ latencyMs: 20 });
    await settleAll(platform, { broker }, { portfolios: ids, jobs: 3 });
    assert.equal(sent.length, 10, 'each instruction went to the broker once');
    for (const id of ids) {
      assert.deepEqual((await get(service, id)).portfolio, { [ISIN_C]: 3, $EUR: 0 });
      assert.equal((await orderTransactions(service, id)).length, 1);
    }
  });

  it('books once when the settlement’s connection dies between the broker’s execution and the commit', async () => {
    const id = await portfolio(service, { $EUR: 250 });
    const optimization = await insertOptimization(platform.database.db, service.tenantId, id, { [ISIN_A]: order(2, 100, 0.5) });
    await executeOptimization(platform.database.db, service.tenantId, id, optimization);

    // The broker executes, then holds its answer until the test has killed the settlement's database session.
    const inner = simulatedBroker();
    let calls = 0;
    let release: () => void = () => undefined;
    let executed: () => void = () => undefined;
    const hasExecuted = new Promise<void>((resolve) => (executed = resolve));
    const broker: Broker = {
      moveCash: (move) => inner.moveCash(move),
      placeOrders: async (request) => {
        calls++;
        const result = await inner.placeOrders(request);
        if (calls === 1) {
          executed();
          await new Promise<void>((resolve) => (release = resolve));
        }
        return result;
      },
    };
    const db = knex({
      client: 'pg',
      connection: { connectionString: platform.database.url, application_name: 'settlement-under-test' },
      pool: { min: 0, max: 2 },
    });
    const job = await startBrokerSettlement({ db, databaseUrl: platform.database.url, broker, logger: createLogger('test', 'error'), pollMs: 20, retryMs: 20 });
    try {
      await hasExecuted;
      const killed = await platform.database.db.raw(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'settlement-under-test' and state = 'idle in transaction'`,
      );
      assert.equal(killed.rows.length, 1, 'the settlement’s transaction was open while the broker answered');
      release();
      for (let i = 0; i < 400 && (await openInstructions(platform.database.db, [id])) > 0; i++) await new Promise((r) => setTimeout(r, 25));
    } finally {
      release();
      await job.stop();
      await db.destroy();
    }
    assert.equal(await openInstructions(platform.database.db, [id]), 0);
    assert.equal(calls, 2, 'the instruction was sent again after the crash');
    assert.deepEqual((await get(service, id)).portfolio, { [ISIN_A]: 2, $EUR: 49.5 });
    assert.equal((await get(service, id)).version, 2);
    assert.equal((await orderTransactions(service, id)).length, 1);
  });
});
