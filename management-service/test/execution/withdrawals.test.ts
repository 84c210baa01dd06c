import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { ISIN_A, account, countingBroker, executeOptimization, insertOptimization, instructionsOf, order, recordingLogger, settleAll } from './fixtures.ts';
import { eventsSettled } from '@platform/test-support/database';

type Envelope = { id: string; subject: string; action: string; data: Record<string, unknown> };
type Tenant = { api: Api; tenantId: string; owner: string; events: () => Promise<Envelope[]> };

describe('withdrawals the service pays out (docs/adr/0022-execution-and-withdrawals.md)', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let service: Tenant;
  let client: Tenant;

  const tenant = async (brokerIntegration: 'CLIENT' | 'SERVICE'): Promise<Tenant> => {
    const t = await platform.tenant(undefined, { brokerIntegration });
    const api = await machineApi(platform, t);
    let cursor = '';
    const events = async (): Promise<Envelope[]> => {
      await eventsSettled(platform.database.db);
      const res = await api('GET', `/events/?limit=1000${cursor ? `&after=${cursor}` : ''}`);
      cursor = res.body.next_cursor;
      return res.body.results;
    };
    return { api, tenantId: t.tenantId, owner: (await api('POST', '/users/', build.user())).body.id, events };
  };
  const names = (events: Envelope[]) => events.map((e) => `${e.subject}.${e.action}`);
  const get = async (t: Tenant, id: string) => (await t.api('GET', `/portfolios/${id}`)).body;
  const cashTransactions = async (t: Tenant, id: string) =>
    ((await t.api('GET', `/portfolios/${id}/transactions/?limit=100`)).body.results as Record<string, string>[]).filter((x) => x.type === 'CASH');
  const withdrawalRows = (id: string) => platform.database.db('withdrawals').where({ portfolio_id: id });
  const divest = (p: { config: { manager_settings: Record<string, unknown> } }) => p.config.manager_settings.divest_amount;
  /** Everything a refusal must leave as it was. */
  const snapshot = async (t: Tenant, id: string) => {
    const p = await get(t, id);
    return {
      version: p.version,
      holdings: p.portfolio,
      divest: divest(p),
      transactions: (await t.api('GET', `/portfolios/${id}/transactions/?limit=100`)).body.results,
      instructions: await instructionsOf(platform.database.db, id),
      withdrawals: await withdrawalRows(id),
      outbox: await platform.database.db('outbox').select('event_id').where({ entity_id: id }).orderBy('seq'),
    };
  };

  before(async () => {
    platform = await startTestPlatform({ BROKER_SETTLEMENT: 'false' });
    service = await tenant('SERVICE');
    client = await tenant('CLIENT');
  });
  after(() => platform.stop());

  describe('robo-advised portfolios', () => {
    // Without a policy the optimizer is never asked: the cash moves only by what these tests do.
    const robo = async (holdings: Record<string, number>) => {
      const res = await service.api('POST', '/portfolios/', build.roboPortfolio(service.owner, {}, { portfolio: holdings, brokerage_account: account }));
      assert.equal(res.status, 201, res.text);
      await service.events();
      return res.body.id as string;
    };
    const setDivest = async (id: string, amount: number) =>
      assert.equal((await service.api('PATCH', `/portfolios/${id}`, { config: { manager_settings: { divest_amount: amount } } })).status, 200);

    it('pays out a divest_amount the cash covers: negative CASH transaction, cash and divest_amount lowered, record and notification', async () => {
      const id = await robo({ [ISIN_A]: 2, $EUR: 100 });
      await setDivest(id, 30.25);
      assert.deepEqual(names(await service.events()), ['portfolios.divest-amount-update']);
      const [queued] = await instructionsOf(platform.database.db, id);
      assert.deepEqual([queued.kind, queued.amount, queued.transaction_id], ['WITHDRAWAL', '30.25', null]);
      assert.deepEqual(await cashTransactions(service, id), [], 'nothing is booked before the broker settles');

      const { broker, moves } = countingBroker();
      await settleAll(platform, { broker });
      assert.deepEqual(
        moves.map((m) => [m.portfolioId, m.direction, m.amount, m.currency]),
        [[id, 'TO_HOUSE_ACCOUNT', '30.25', 'EUR']],
      );
      const [cash] = await cashTransactions(service, id);
      assert.deepEqual([cash!.status, cash!.quantity, cash!.instrument_id], ['SETTLED', '-30.25', '$EUR']);
      const p = await get(service, id);
      assert.deepEqual([p.portfolio, divest(p)], [{ [ISIN_A]: 2, $EUR: 69.75 }, 0]);
      const [record] = await withdrawalRows(id);
      assert.deepEqual([record.amount, record.transaction_id, record.external_id], ['30.25', cash!.id, null]);
      const emitted = await service.events();
      assert.deepEqual(names(emitted), ['portfolios.divest-amount-update', 'notifications.withdrawal-executed']);
      const notification = emitted[1]!;
      assert.equal(notification.id, record.notification_event_id);
      assert.deepEqual(
        [notification.data.id, notification.data.amount, notification.data.currency, notification.data.transaction_id],
        [id, '30.25', 'EUR', cash!.id],
      );
    });

    it('waits while the cash does not cover it, and pays min(divest_amount, cash) out of the cash an execution freed', async () => {
      const id = await robo({ [ISIN_A]: 10, $EUR: 20 });
      await setDivest(id, 100);
      assert.deepEqual(await instructionsOf(platform.database.db, id), []);
      // The optimizer sold 10 × 9 − 0.5: 109.5 in cash.
      await executeOptimization(
        platform.database.db,
        service.tenantId,
        id,
        await insertOptimization(platform.database.db, service.tenantId, id, { [ISIN_A]: order(-10, 9, 0.5) }),
      );
      await settleAll(platform, { broker: countingBroker().broker });
      assert.deepEqual(
        (await instructionsOf(platform.database.db, id)).map((i) => [i.kind, i.amount]),
        [
          ['ORDERS', null],
          ['WITHDRAWAL', '100'],
        ],
      );
      const p = await get(service, id);
      assert.deepEqual([p.portfolio, divest(p)], [{ $EUR: 9.5 }, 0]);
      assert.deepEqual(
        (await cashTransactions(service, id)).map((x) => [x.status, x.quantity]),
        [['SETTLED', '-100']],
      );
    });

    it('pays out all the cash for everything (1e100): at once when all is cash, else after the execution that sold the rest', async () => {
      const cashOnly = await robo({ $EUR: 12.34 });
      await setDivest(cashOnly, 1e100);
      const invested = await robo({ [ISIN_A]: 3, $EUR: 1 });
      await setDivest(invested, 1e100);
      assert.deepEqual(await instructionsOf(platform.database.db, invested), []);
      await executeOptimization(
        platform.database.db,
        service.tenantId,
        invested,
        await insertOptimization(platform.database.db, service.tenantId, invested, { [ISIN_A]: order(-3, 33.33, 0.01) }),
      );
      await settleAll(platform, { broker: countingBroker().broker });
      for (const [id, paid] of [
        [cashOnly, '-12.34'],
        [invested, '-100.98'],
      ] as const) {
        const p = await get(service, id);
        assert.deepEqual([p.portfolio, divest(p)], [{ $EUR: 0 }, 0], id);
        assert.deepEqual(
          (await cashTransactions(service, id)).map((x) => x.quantity),
          [paid],
        );
      }
    });

    it('changes nothing when the broker refuses the move, logs it, and pays at the next trigger', async () => {
      const id = await robo({ $EUR: 100 });
      await setDivest(id, 40);
      await service.events();
      const before = await snapshot(service, id);
      const { logger, warnings } = recordingLogger();
      await settleAll(platform, { broker: countingBroker({ refuseRate: 1 }).broker, logger });
      const after = await snapshot(service, id);
      assert.deepEqual({ ...after, instructions: undefined }, { ...before, instructions: undefined });
      assert.deepEqual(
        after.instructions.map((i) => [i.kind, i.settled_at !== null, i.last_error]),
        [['WITHDRAWAL', true, 'simulated refusal of the cash move']],
      );
      assert.deepEqual(await service.events(), []);
      assert.ok(warnings.some((w) => w.meta.portfolio === id && w.meta.reason === 'simulated refusal of the cash move'));
      // The divest_amount stays; its next change pays it.
      await setDivest(id, 50);
      await settleAll(platform, { broker: countingBroker().broker });
      const p = await get(service, id);
      assert.deepEqual([p.portfolio.$EUR, divest(p)], [50, 0]);
    });

    it('keeps one withdrawal in flight per portfolio, sent with the divest_amount in force then', async () => {
      const id = await robo({ $EUR: 100 });
      await setDivest(id, 30);
      await setDivest(id, 20);
      assert.equal((await instructionsOf(platform.database.db, id)).length, 1);
      await settleAll(platform, { broker: countingBroker().broker });
      assert.equal((await get(service, id)).portfolio.$EUR, 80);
    });
  });

  describe('user-managed portfolios: POST /portfolios/{portfolio_id}/withdrawals/', () => {
    const userManaged = async (t: Tenant, cash: number) => {
      const res = await t.api('POST', '/portfolios/', build.portfolio(t.owner, { portfolio: { $EUR: cash }, brokerage_account: account }));
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.status, 'ACTIVE');
      await t.events();
      return res.body.id as string;
    };
    const withdraw = (api: Api, id: string, amount: string, currency = 'EUR', headers: Record<string, string> = {}) =>
      api('POST', `/portfolios/${id}/withdrawals/`, { amount, currency }, headers);

    it('pays out what the owner asks for: 202 with the PENDING transaction, booked when the broker settles', async () => {
      const id = await userManaged(service, 100);
      const owner = await userApi(platform, service.api, service.owner);
      const res = await withdraw(owner, id, '40.50', 'EUR', { 'Idempotency-Key': 'wd-owner-1' });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.headers.get('location'), `/portfolios/${id}/transactions/${res.body.id}`);
      assert.deepEqual(
        [res.body.type, res.body.status, res.body.quantity, res.body.currency, res.body.instrument_id, res.body.version_authored_by_user_id],
        ['CASH', 'PENDING', '-40.50', 'EUR', '$EUR', service.owner],
      );
      const replay = await withdraw(owner, id, '40.50', 'EUR', { 'Idempotency-Key': 'wd-owner-1' });
      assert.deepEqual([replay.status, replay.headers.get('idempotency-replayed'), replay.body.id], [202, 'true', res.body.id]);
      assert.equal((await instructionsOf(platform.database.db, id)).length, 1);
      assert.equal((await get(service, id)).portfolio.$EUR, 100, 'nothing is booked before the broker settles');

      const { broker, moves } = countingBroker();
      await settleAll(platform, { broker });
      assert.deepEqual(
        moves.map((m) => [m.direction, m.amount]),
        [['TO_HOUSE_ACCOUNT', '40.50']],
      );
      const settled = (await owner('GET', res.headers.get('location')!)).body;
      assert.deepEqual([settled.status, settled.quantity, settled.version], ['SETTLED', '-40.50', 2]);
      assert.equal((await get(service, id)).portfolio.$EUR, 59.5);
      const [record] = await withdrawalRows(id);
      assert.equal(record.transaction_id, res.body.id);
      const emitted = await service.events();
      assert.deepEqual(names(emitted), ['notifications.withdrawal-executed']);
      assert.deepEqual([record.amount, emitted[0]!.data.amount, emitted[0]!.data.transaction_id], ['40.50', '40.50', res.body.id]);
    });

    it('lets the machine client ask too, one withdrawal at a time', async () => {
      const id = await userManaged(service, 100);
      const first = await withdraw(service.api, id, '10');
      assert.equal(first.status, 202, first.text);
      assert.equal(first.body.version_authored_by_user_id, null);
      const before = await snapshot(service, id);
      assertProblem(await withdraw(service.api, id, '10'), 409, 'state_conflict');
      assert.deepEqual(await snapshot(service, id), before);
      await settleAll(platform, { broker: countingBroker().broker });
      assert.equal((await withdraw(service.api, id, '90')).status, 202);
      await settleAll(platform, { broker: countingBroker().broker });
      assert.equal((await get(service, id)).portfolio.$EUR, 0);
    });

    it('refuses another customer (403) and an unknown portfolio (404), and changes nothing', async () => {
      const id = await userManaged(service, 100);
      const other = (await service.api('POST', '/users/', build.user({ first_name: 'Grace' }))).body.id;
      const before = await snapshot(service, id);
      assertProblem(await withdraw(await userApi(platform, service.api, other), id, '1'), 403, 'forbidden');
      assertProblem(await withdraw(service.api, 'P01HZC48CNR9YNY5M4C8F5S2HT9', '1'), 404, 'not_found');
      assertProblem(await withdraw(service.api, 'not-a-portfolio', '1'), 404, 'not_found');
      assert.deepEqual(await snapshot(service, id), before);
      assert.deepEqual(await service.events(), []);
    });

    it('refuses with 409 and changes nothing: not covered, another currency, archived, robo-advised, CLIENT tenant', async () => {
      const id = await userManaged(service, 100);
      const archived = await userManaged(service, 100);
      await service.api('PATCH', `/portfolios/${archived}`, { archived: true });
      const roboId = (
        await service.api('POST', '/portfolios/', build.roboPortfolio(service.owner, {}, { portfolio: { $EUR: 100 }, brokerage_account: account }))
      ).body.id;
      const clientId = await userManaged(client, 100);
      await service.events();
      const cases: [Tenant, string, string, string, RegExp][] = [
        [service, id, '100.01', 'EUR', /less than the 100.01/],
        [service, id, '1', 'USD', /base currency EUR/],
        [service, archived, '1', 'EUR', /archived/],
        [service, roboId, '1', 'EUR', /divest_amount/],
        [client, clientId, '1', 'EUR', /POST \/events\/withdraw\//],
      ];
      for (const [t, portfolio, amount, currency, detail] of cases) {
        const before = await snapshot(t, portfolio);
        const res = await withdraw(t.api, portfolio, amount, currency);
        assertProblem(res, 409, 'state_conflict');
        assert.match(res.body.detail, detail);
        assert.deepEqual(await snapshot(t, portfolio), before, portfolio);
      }
      assert.deepEqual(await service.events(), []);
      assert.deepEqual(await client.events(), []);
      // The contract refuses amounts that are not positive decimals.
      assertProblem(await withdraw(service.api, id, '-1'), 422, 'validation_failed');
      assertProblem(await withdraw(service.api, id, '0'), 422, 'validation_failed');
    });

    it('cancels the PENDING transaction when the broker refuses, and changes nothing else', async () => {
      const id = await userManaged(service, 100);
      const res = await withdraw(service.api, id, '25');
      const before = await get(service, id);
      await settleAll(platform, { broker: countingBroker({ refuseRate: 1 }).broker });
      assert.equal((await service.api('GET', res.headers.get('location')!)).body.status, 'CANCELLED');
      const after = await get(service, id);
      assert.deepEqual([after.version, after.portfolio], [before.version, before.portfolio]);
      assert.deepEqual(await withdrawalRows(id), []);
      assert.deepEqual(await service.events(), []);
    });
  });
});
