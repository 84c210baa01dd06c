import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import {
  ISIN_A,
  account,
  answerLostOnce,
  countingBroker,
  executeOptimization,
  insertOptimization,
  instructionsOf,
  order,
  readEntity,
  settleOnce,
} from './fixtures.ts';

/**
 * Cash held for what is with the broker, and payouts no larger than the divest_amount in force when they are sent
 * (docs/adr/0022-execution-and-withdrawals.md). The settlement is stepped by hand (settleOnce), so each test decides
 * what happens between a payout's queueing, its sending and its settlement.
 */
describe('cash held for payouts and orders with the broker (docs/adr/0022-execution-and-withdrawals.md)', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let api: Api;
  let tenantId: string;
  let owner: string;

  before(async () => {
    platform = await startTestPlatform({ BROKER_SETTLEMENT: 'false' });
    const t = await platform.tenant(undefined, { brokerIntegration: 'SERVICE' });
    tenantId = t.tenantId;
    api = await machineApi(platform, t);
    owner = (await api('POST', '/users/', build.user())).body.id;
  });
  after(() => platform.stop());

  const get = async (id: string) => (await api('GET', `/portfolios/${id}`)).body;
  const divest = (p: { config: { manager_settings: Record<string, unknown> } }) => p.config.manager_settings.divest_amount;
  const cashTransactions = async (id: string) =>
    ((await api('GET', `/portfolios/${id}/transactions/?limit=100`)).body.results as Record<string, string>[]).filter((x) => x.type === 'CASH');
  /** Everything a refusal must leave as it was. */
  const snapshot = async (id: string) => {
    const db = platform.database.db;
    const p = await get(id);
    return {
      version: p.version,
      holdings: p.portfolio,
      divest: divest(p),
      transactions: (await api('GET', `/portfolios/${id}/transactions/?limit=100`)).body.results,
      instructions: await instructionsOf(db, id),
      withdrawals: await db('withdrawals').where({ portfolio_id: id }),
      outbox: await db('outbox').select('event_id').where({ entity_id: id }).orderBy('seq'),
    };
  };
  const userManaged = async (cash: number) => {
    const res = await api('POST', '/portfolios/', build.portfolio(owner, { portfolio: { $EUR: cash }, brokerage_account: account }));
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  // Without a policy the optimizer is never asked: the cash moves only by what these tests do.
  const robo = async (holdings: Record<string, number>) => {
    const res = await api('POST', '/portfolios/', build.roboPortfolio(owner, {}, { portfolio: holdings, brokerage_account: account }));
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  const setDivest = async (id: string, amount: number) => {
    const res = await api('PATCH', `/portfolios/${id}`, { config: { manager_settings: { divest_amount: amount } } });
    assert.equal(res.status, 200, res.text);
  };

  describe('a payout with the broker holds its cash', () => {
    it('refuses a reported payout that would spend the held cash (409), and the settled payout leaves the cash at 0', async () => {
      const id = await userManaged(100);
      assert.equal((await api('POST', `/portfolios/${id}/withdrawals/`, { amount: '100', currency: 'EUR' })).status, 202);
      const before = await snapshot(id);
      const res = await api('POST', '/events/withdraw/', { data: { amount: '50', currency: 'EUR', portfolio: id, external_id: `out-${id}` } });
      assertProblem(res, 409, 'state_conflict');
      assert.match(res.body.detail, /100 of it held/);
      assert.deepEqual(await snapshot(id), before);

      await settleOnce(platform.database.db, { broker: countingBroker().broker });
      const p = await get(id);
      assert.equal(p.portfolio.$EUR, 0);
      assert.deepEqual(
        (await cashTransactions(id)).map((x) => [x.status, x.quantity]),
        [['SETTLED', '-100']],
      );
    });

    it('refuses a holdings PATCH that takes the cash below the held amount (409), allows one that leaves it', async () => {
      const id = await userManaged(100);
      assert.equal((await api('POST', `/portfolios/${id}/withdrawals/`, { amount: '60', currency: 'EUR' })).status, 202);
      const before = await snapshot(id);
      for (const holdings of [{ $EUR: 59.99 }, { [ISIN_A]: 1 }]) {
        const res = await api('PATCH', `/portfolios/${id}`, { portfolio: holdings });
        assertProblem(res, 409, 'state_conflict');
        assert.match(res.body.detail, /60 EUR of the cash is with the broker/);
        assert.deepEqual(await snapshot(id), before, JSON.stringify(holdings));
      }
      assert.equal((await api('PATCH', `/portfolios/${id}`, { portfolio: { $EUR: 60, [ISIN_A]: 1 } })).status, 200);

      await settleOnce(platform.database.db, { broker: countingBroker().broker });
      assert.deepEqual((await get(id)).portfolio, { $EUR: 0, [ISIN_A]: 1 });
      // Once settled nothing is held: the cash is the client's to set again.
      assert.equal((await api('PATCH', `/portfolios/${id}`, { portfolio: { $EUR: 0 } })).status, 200);
    });

    it('sends no orders that need the cash a payout holds: the execution is REFUSED, nothing bought, the payout paid', async () => {
      const id = await robo({ $EUR: 100 });
      await setDivest(id, 80);
      const optimization = await insertOptimization(platform.database.db, tenantId, id, { [ISIN_A]: order(5, 10, 0.5) });
      assert.deepEqual(await executeOptimization(platform.database.db, tenantId, id, optimization), { execution_status: 'PENDING', execution_detail: null });
      const { broker, sent, moves } = countingBroker();
      await settleOnce(platform.database.db, { broker });

      assert.deepEqual(
        moves.map((m) => m.amount),
        ['80'],
      );
      assert.equal(sent.length, 1, 'the orders never reached the broker');
      const executed = await readEntity(platform.database.db, tenantId, 'optimizations', optimization);
      assert.equal(executed.doc.execution_status, 'REFUSED');
      assert.match(String(executed.doc.execution_detail), /need 50.5 EUR and 20 EUR of the cash is available/);
      const p = await get(id);
      assert.deepEqual([p.portfolio, divest(p)], [{ $EUR: 20 }, 0]);
    });
  });

  describe('a payout is no larger than the divest_amount in force when it is sent', () => {
    it('pays the lowered divest_amount when it was lowered before the payout was sent', async () => {
      const id = await robo({ $EUR: 100 });
      await setDivest(id, 30);
      await setDivest(id, 20.5);
      const { broker, moves } = countingBroker();
      await settleOnce(platform.database.db, { broker });
      assert.deepEqual(
        moves.map((m) => m.amount),
        ['20.5'],
      );
      const p = await get(id);
      assert.deepEqual([p.portfolio.$EUR, divest(p)], [79.5, 0]);
      assert.deepEqual(
        (await cashTransactions(id)).map((x) => x.quantity),
        ['-20.5'],
      );
    });

    it('sends nothing when the divest_amount was set back to 0 before the payout was sent', async () => {
      const id = await robo({ $EUR: 100 });
      await setDivest(id, 30);
      await setDivest(id, 0);
      const { broker, sent } = countingBroker();
      await settleOnce(platform.database.db, { broker });
      assert.deepEqual(sent, []);
      const [instruction] = await instructionsOf(platform.database.db, id);
      assert.ok(instruction.settled_at !== null);
      const p = await get(id);
      assert.deepEqual([p.portfolio.$EUR, divest(p)], [100, 0]);
      assert.deepEqual(await cashTransactions(id), []);
    });

    it('books what was sent once the broker may have executed it, and a lowered divest_amount starts no second payout', async () => {
      const id = await robo({ $EUR: 100 });
      await setDivest(id, 30);
      const { broker, moves } = answerLostOnce();
      await settleOnce(platform.database.db, { broker });
      const [sentOnce] = await instructionsOf(platform.database.db, id);
      assert.deepEqual([sentOnce.settled_at, sentOnce.attempts], [null, 1]);
      await setDivest(id, 10);
      await settleOnce(platform.database.db, { broker });
      assert.deepEqual(
        moves.map((m) => [m.id, m.amount]),
        [
          [sentOnce.id, '30'],
          [sentOnce.id, '30'],
        ],
      );
      const p = await get(id);
      assert.deepEqual([p.portfolio.$EUR, divest(p)], [70, 0]);
      assert.equal((await instructionsOf(platform.database.db, id)).length, 1, 'no second payout');
    });
  });
});
