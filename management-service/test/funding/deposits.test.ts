import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { startBrokerSettlement } from '../../src/jobs/broker-settlement.ts';
import type { Broker, CashMove } from '../../src/broker/broker.ts';
import { createLogger } from '@platform/shared';
import { eventsSettled } from '@platform/test-support/database';

type Envelope = { subject: string; action: string; data: Record<string, unknown> };

describe('deposits (docs/adr/0009-funding-modes.md)', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let api: Api;
  let owner: string;
  let policy: string;
  let tenantId: string;
  let cursor = '';

  const deposit = (portfolio: string, amount: string, over: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    api(
      'POST',
      '/events/deposit/',
      { data: { amount, currency: 'EUR', portfolio, external_id: `cb-${Math.random().toString(36).slice(2)}`, ...over } },
      headers,
    );
  const portfolio = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/portfolios/', body);
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  const get = async (id: string) => (await api('GET', `/portfolios/${id}`)).body;
  const transactionsOf = async (id: string) => (await api('GET', `/portfolios/${id}/transactions/?limit=100`)).body.results as Record<string, unknown>[];
  const events = async (): Promise<Envelope[]> => {
    await eventsSettled(platform.database.db);
    const res = await api('GET', `/events/?limit=1000${cursor ? `&after=${cursor}` : ''}`);
    cursor = res.body.next_cursor;
    return res.body.results;
  };
  const outboxMessages = (portfolioId: string) =>
    platform.database.db('outbox').select('nats_subject', 'envelope', 'event_id').where({ entity_id: portfolioId }).whereNotNull('nats_subject').orderBy('seq');

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    tenantId = tenant.tenantId;
    api = await machineApi(platform, tenant);
    owner = (await api('POST', '/users/', build.user({ external_id: 'crm-1' }))).body.id;
    policy = (
      await api('POST', '/policies/', build.policy({ config: { minimum_funding_amount: '100.00', model_portfolio: { IE00B4L5Y983: 0.9 }, cash_buffer: 0.02 } }))
    ).body.id;
    await events();
  });
  after(() => platform.stop());

  it('books a SETTLED CASH transaction with the broker id and adds the amount to the cash: 201 with Location', async () => {
    const id = await portfolio(build.portfolio(owner, { portfolio: { IE00B4L5Y983: 4 } }));
    const res = await deposit(id, '1000.25', { external_id: 'cb-20240603-0001' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('location'), `/portfolios/${id}/transactions/${res.body.id}`);
    assert.match(res.body.id, /^T[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.deepEqual(
      {
        type: res.body.type,
        status: res.body.status,
        quantity: res.body.quantity,
        currency: res.body.currency,
        instrument_id: res.body.instrument_id,
        external_id: res.body.external_id,
        portfolio_id: res.body.portfolio_id,
      },
      { type: 'CASH', status: 'SETTLED', quantity: '1000.25', currency: 'EUR', instrument_id: '$EUR', external_id: 'cb-20240603-0001', portfolio_id: id },
    );
    const after = await get(id);
    assert.deepEqual(after.portfolio, { IE00B4L5Y983: 4, $EUR: 1000.25 });
    assert.equal(after.version, 2);
    assert.deepEqual((await api('GET', res.headers.get('location')!)).body.id, res.body.id);
  });

  it('sums amounts exactly: 0.1 + 0.2 is 0.3, and a hundred dimes are 10', async () => {
    const id = await portfolio(build.portfolio(owner));
    assert.equal((await deposit(id, '0.1')).status, 201);
    assert.equal((await deposit(id, '0.2')).status, 201);
    assert.equal((await get(id)).portfolio.$EUR, 0.3);
    const many = await portfolio(build.portfolio(owner));
    for (let i = 0; i < 100; i++) assert.equal((await deposit(many, '0.10')).status, 201);
    assert.equal((await get(many)).portfolio.$EUR, 10);
  });

  it('sets funded_since when cash reaches the policy minimum, re-derives the status, and emits the events and one optimizer request', async () => {
    const id = await portfolio(build.roboPortfolio(owner, { policy_id: policy }));
    assert.equal((await get(id)).status, 'WAITING_FOR_FUNDS');
    await events();
    const first = await deposit(id, '60.00');
    let p = await get(id);
    assert.deepEqual([p.funded_since, p.status, p.portfolio.$EUR], [null, 'WAITING_FOR_FUNDS', 60]);
    assert.deepEqual(
      (await events()).map((e) => [`${e.subject}.${e.action}`, e.data.amount, e.data.transaction_id]),
      [['notifications.deposit-received', '60.00', first.body.id]],
    );
    const second = await deposit(id, '40.00');
    p = await get(id);
    assert.equal(p.status, 'ACTIVE');
    assert.equal(p.funded_since, p.version_datetime);
    const emitted = await events();
    assert.deepEqual(
      emitted.map((e) => `${e.subject}.${e.action}`),
      ['portfolios.status-update', 'notifications.deposit-received'],
    );
    assert.equal(emitted[0]!.data.value, 'ACTIVE');
    assert.deepEqual(emitted[1]!.data, {
      id,
      external_id: null,
      owned_by_user_id: owner,
      owned_by_external_user_id: 'crm-1',
      amount: '40.00',
      currency: 'EUR',
      transaction_id: second.body.id,
    });
    // One PENDING optimization and one request: the second deposit finds the first still computing.
    const messages = await outboxMessages(id);
    assert.equal(messages.length, 1);
    const request = messages[0]!.envelope;
    assert.equal(messages[0]!.nats_subject, `platform.optimizer.requests.${tenantId}`);
    assert.equal(messages[0]!.event_id, request.request_id);
    assert.deepEqual(
      { ...request, request_id: undefined, optimization_id: undefined, requested_at: undefined },
      {
        request_id: undefined,
        optimization_id: undefined,
        requested_at: undefined,
        tenant_id: tenantId,
        portfolio_id: id,
        reason: 'DEPOSIT',
        base_currency: 'EUR',
        holdings: { $EUR: 60 },
        cash_buffer: 0.02,
        divest_amount: 0,
        asset_class_bands: {},
        model_portfolio: { IE00B4L5Y983: 0.9 },
        fractional_shares: false,
        transaction_cost_bps: 0,
        rebalancing_threshold: 0.05,
      },
    );
    const optimization = await platform.database.db('entities').where({ id: request.optimization_id }).first();
    assert.deepEqual([optimization.type, optimization.parent_id, optimization.doc.status], ['optimizations', id, 'PENDING']);
  });

  it('refuses portfolios that are not ACTIVE or WAITING_FOR_FUNDS, archived, paper money, or of another currency, and changes nothing', async () => {
    const archived = await portfolio(build.portfolio(owner));
    await api('PATCH', `/portfolios/${archived}`, { archived: true });
    const paper = await portfolio(build.roboPortfolio(owner, { policy_id: policy }, { money_type: 'PAPER_MONEY' }));
    const noPolicy = await portfolio(build.roboPortfolio(owner));
    const inactive = await portfolio(build.portfolio(owner, { config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: { active: false } } }));
    const usd = await portfolio(build.portfolio(owner));
    const cases: [string, string, number, string][] = [
      [archived, 'EUR', 409, 'state_conflict'],
      [paper, 'EUR', 409, 'state_conflict'],
      [noPolicy, 'EUR', 409, 'state_conflict'],
      [inactive, 'EUR', 409, 'state_conflict'],
      [usd, 'USD', 422, 'validation_failed'],
      ['P01HZC48CNR9YNY5M4C8F5S2HT9', 'EUR', 404, 'not_found'],
    ];
    for (const [id, currency, status, code] of cases) {
      const before = await api('GET', `/portfolios/${id}`);
      const res = await deposit(id, '10', { currency });
      assertProblem(res, status, code);
      if (status === 422) assert.deepEqual(res.body.errors[0].loc, ['body', 'data', 'currency']);
      if (before.status === 200) {
        assert.equal((await get(id)).version, before.body.version, `${id} changed`);
        assert.equal((await transactionsOf(id)).length, 0);
      }
    }
  });

  it('validates the event against the contract: amounts are positive decimal strings', async () => {
    const id = await portfolio(build.portfolio(owner));
    for (const amount of ['0', '-5', '1e3', '12,50', ' 1', 10]) {
      const res = await api('POST', '/events/deposit/', { data: { amount, currency: 'EUR', portfolio: id, external_id: 'x' } });
      assertProblem(res, 422, 'validation_failed');
      assert.deepEqual(res.body.errors[0].loc, ['body', 'data', 'amount']);
    }
    assertProblem(await api('POST', '/events/deposit/', { data: { amount: '1', currency: 'EUR', portfolio: id } }), 422, 'validation_failed');
    assert.equal((await get(id)).version, 1);
  });

  it('answers a second deposit with the same external_id (no key) with 409, never a second booking', async () => {
    const id = await portfolio(build.portfolio(owner));
    assert.equal((await deposit(id, '5', { external_id: 'cb-dup' })).status, 201);
    const again = await deposit(id, '5', { external_id: 'cb-dup' });
    assertProblem(again, 409, 'duplicate_value');
    assert.deepEqual(again.body.errors[0].loc, ['body', 'data', 'external_id']);
    assert.equal((await get(id)).portfolio.$EUR, 5);
    assert.equal((await transactionsOf(id)).length, 1);
  });

  it('lets only the tenant machine client report deposits, into its own portfolios', async () => {
    const id = await portfolio(build.portfolio(owner));
    const customer = await userApi(platform, api, owner);
    assertProblem(await customer('POST', '/events/deposit/', { data: { amount: '1', currency: 'EUR', portfolio: id, external_id: 'u-1' } }), 403, 'forbidden');
    const other = await machineApi(platform, await platform.tenant());
    assertProblem(await other('POST', '/events/deposit/', { data: { amount: '1', currency: 'EUR', portfolio: id, external_id: 'o-1' } }), 404, 'not_found');
    assert.equal((await get(id)).version, 1);
  });

  it('books 50 concurrent deposits with distinct keys into one portfolio to the exact total', async () => {
    const id = await portfolio(build.portfolio(owner));
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => deposit(id, `${i + 1}.01`, {}, { 'Idempotency-Key': `k-${id}-${i}` })));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(50).fill(201),
    );
    const p = await get(id);
    assert.equal(p.portfolio.$EUR, 1275.5); // 1 + 2 + … + 50 = 1275, plus 50 × 0.01
    assert.equal(p.version, 51);
    assert.equal((await transactionsOf(id)).length, 50);
  });
});

describe('deposits with the broker integrated by the service', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let api: Api;
  let owner: string;
  const account = { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000' };

  before(async () => {
    platform = await startTestPlatform({ BROKER_SETTLEMENT: 'false' });
    api = await machineApi(platform, await platform.tenant(undefined, { brokerIntegration: 'SERVICE' }));
    owner = (await api('POST', '/users/', build.user())).body.id;
  });
  after(() => platform.stop());

  /** A broker that records the moves it gets and settles or refuses them. */
  const recordingBroker = (answer: 'SETTLED' | 'REJECTED') => {
    const moves: CashMove[] = [];
    const broker: Broker = {
      moveCash: async (move) => {
        moves.push(move);
        return answer === 'SETTLED' ? { status: 'SETTLED', reference: `R-${move.id}` } : { status: 'REJECTED', reason: 'account blocked' };
      },
      placeOrders: () => Promise.reject(new Error('deposits place no orders')),
    };
    return { broker, moves };
  };
  const settleWith = async (broker: Broker, until: () => Promise<boolean>) => {
    const job = await startBrokerSettlement({
      db: platform.database.db,
      databaseUrl: platform.database.url,
      broker,
      logger: createLogger('test', 'error'),
      pollMs: 50,
    });
    try {
      for (let i = 0; i < 200 && !(await until()); i++) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await job.stop();
    }
  };

  it('answers 202 with a PENDING transaction and books the deposit when the broker settles it, once', async () => {
    const id = (await api('POST', '/portfolios/', build.portfolio(owner, { brokerage_account: account }))).body.id;
    const res = await api('POST', '/events/deposit/', { data: { amount: '250.50', currency: 'EUR', portfolio: id, external_id: 'svc-1' } });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.status, 'PENDING');
    assert.equal(res.headers.get('location'), `/portfolios/${id}/transactions/${res.body.id}`);
    assert.deepEqual((await api('GET', `/portfolios/${id}`)).body.portfolio, {});
    const { broker, moves } = recordingBroker('SETTLED');
    await settleWith(broker, async () => (await api('GET', res.headers.get('location')!)).body.status === 'SETTLED');
    const p = (await api('GET', `/portfolios/${id}`)).body;
    assert.equal(p.portfolio.$EUR, 250.5);
    assert.notEqual(p.funded_since, null);
    assert.deepEqual(
      moves.map((m) => [m.portfolioId, m.amount, m.currency, m.direction]),
      [[id, '250.50', 'EUR', 'TO_SUBACCOUNT']],
    );
    // Settled instructions are not executed again.
    await settleWith(broker, async () => true);
    assert.equal(moves.length, 1);
    assert.equal((await api('GET', `/portfolios/${id}`)).body.portfolio.$EUR, 250.5);
  });

  it('cancels the transaction and leaves cash alone when the broker refuses the move', async () => {
    const id = (await api('POST', '/portfolios/', build.portfolio(owner, { brokerage_account: account }))).body.id;
    const res = await api('POST', '/events/deposit/', { data: { amount: '10', currency: 'EUR', portfolio: id, external_id: 'svc-2' } });
    const { broker } = recordingBroker('REJECTED');
    await settleWith(broker, async () => (await api('GET', res.headers.get('location')!)).body.status === 'CANCELLED');
    assert.deepEqual((await api('GET', `/portfolios/${id}`)).body.portfolio, {});
  });

  it('refuses a deposit while the portfolio waits for its brokerage account', async () => {
    const id = (await api('POST', '/portfolios/', build.portfolio(owner))).body.id;
    assertProblem(
      await api('POST', '/events/deposit/', { data: { amount: '10', currency: 'EUR', portfolio: id, external_id: 'svc-3' } }),
      409,
      'state_conflict',
    );
  });
});
