import assert from 'node:assert/strict';
import { connectNats, subjects, type NatsConnection } from '@platform/shared';
import { testNatsUrl } from '@platform/test-support/database';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { managementClient } from '../src/clients.ts';
import { eventsSettled } from '@platform/test-support/database';

type Client = ReturnType<typeof managementClient>;
type Event = { id: string; subject: string; action: string; data: Record<string, unknown> };
type Message = { subject: string; body: Record<string, unknown> };

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const names = (events: Event[]) => events.map((e) => `${e.subject}.${e.action}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A customer of one tenant with a robo-advised, real-money portfolio waiting for its first funding. */
type Journey = {
  tenantId: string;
  client: Client;
  token: string;
  userId: string;
  policyId: string;
  portfolioId: string;
  /** Outbound events since the previous call, through GET /events/. */
  events: () => Promise<Event[]>;
};

describe('funding and withdrawal journeys of both broker integrations (generated client)', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let nc: NatsConnection;
  // Everything the relay publishes on NATS, in the order it arrives on this one connection.
  const published: Message[] = [];
  let clientSide: Journey;
  let serviceSide: Journey;

  const onboard = async (brokerIntegration: 'CLIENT' | 'SERVICE'): Promise<Journey> => {
    const tenant = await platform.tenant(undefined, { brokerIntegration });
    const login = await managementClient(platform.managementUrl).POST('/auth/login/', {
      body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret },
    });
    const token = login.data!.access_token;
    const client = managementClient(platform.managementUrl, token);
    const user = await client.POST('/users/', { body: { first_name: 'Ada', last_name: 'Lovelace', external_id: `crm-${brokerIntegration}` } });
    assert.equal(user.response.status, 201);
    const policy = await client.POST('/policies/', {
      body: {
        name: 'Balanced',
        config: { minimum_funding_amount: '100', model_portfolio: { IE00B4L5Y983: 0.6, IE00B3F81409: 0.35 }, asset_class_bands: { EQUITY: [0.5, 0.7] } },
      },
    });
    assert.equal(policy.response.status, 201);
    const portfolio = await client.POST('/portfolios/', {
      body: {
        name: 'Robo',
        external_id: `pf-${brokerIntegration}`,
        owned_by_user_id: user.data!.id,
        base_currency: 'EUR',
        money_type: 'REAL_MONEY',
        config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: { policy_id: policy.data!.id } },
        ...(brokerIntegration === 'SERVICE' ? { brokerage_account: { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000' } } : {}),
      },
    });
    assert.equal(portfolio.response.status, 201);
    assert.equal(portfolio.data!.status, 'WAITING_FOR_FUNDS');
    assert.equal(portfolio.data!.funded_since, null);
    let cursor: string | undefined;
    const events = async () => {
      await eventsSettled(platform.database.db);
      const page = await client.GET('/events/', { params: { query: cursor ? { after: cursor } : {} } });
      assert.equal(page.response.status, 200);
      cursor = page.data!.next_cursor;
      return page.data!.results as unknown as Event[];
    };
    await events();
    return { tenantId: tenant.tenantId, client, token, userId: user.data!.id, policyId: policy.data!.id, portfolioId: portfolio.data!.id, events };
  };

  const getPortfolio = async (j: Journey) => {
    const res = await j.client.GET('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: j.portfolioId } } });
    assert.equal(res.response.status, 200);
    return res.data!;
  };

  const cashTransactions = async (j: Journey) => {
    const res = await j.client.GET('/portfolios/{portfolio_id}/transactions/', { params: { path: { portfolio_id: j.portfolioId } } });
    assert.equal(res.response.status, 200);
    return res
      .data!.results.map((t) => ({ id: t.id, type: t.type, status: t.status, quantity: t.quantity, currency: t.currency, external_id: t.external_id }))
      .sort((a, b) => a.id.localeCompare(b.id));
  };

  /** The id in a Location header, checked to be the path of a transaction of the journey's portfolio. */
  const transactionAt = (j: Journey, location: string | null) => {
    const match = location?.match(/^\/portfolios\/(P[0-9A-Z]{26})\/transactions\/(T[0-9A-Z]{26})$/);
    assert.ok(match, `Location of a transaction, got ${location}`);
    assert.equal(match[1], j.portfolioId);
    return match[2]!;
  };

  /** Waits until the relay has published the tenant event `eventId`; everything committed before it was published earlier. */
  const relayedUpTo = async (j: Journey, eventId: string) => {
    for (let i = 0; i < 200; i++) {
      if (published.some((m) => m.subject === subjects.tenantEvents(j.tenantId) && m.body.id === eventId)) return;
      await sleep(50);
    }
    assert.fail(`event ${eventId} never reached NATS`);
  };
  const optimizerRequestsFor = (j: Journey) =>
    published.filter((m) => m.subject === subjects.optimizerRequests(String(m.body.tenant_id)) && m.body.portfolio_id === j.portfolioId).map((m) => m.body);

  const pendingDivest = async (j: Journey) => {
    const res = await j.client.GET('/portfolios/', {
      params: { query: { query: 'config.manager_settings.divest_amount neq 0 and config.manager_settings.divest_amount neq null' } },
    });
    assert.equal(res.response.status, 200);
    return res.data!.results.map((p) => p.id);
  };

  before(async () => {
    // The journeys follow the first optimization while it is PENDING: no results are stored here (docs/adr/0021-optimizations.md).
    platform = await startTestPlatform({ BROKER_SIMULATED_LATENCY_MS: '50', OPTIMIZER_RESULTS: 'false' });
    nc = await connectNats(testNatsUrl(), 'e2e-funding');
    const record = (_: Error | null, msg: { subject: string; json: <T>() => T }) => {
      published.push({ subject: msg.subject, body: msg.json() });
    };
    nc.subscribe(subjects.everyOptimizerRequest, { callback: record });
    nc.subscribe('tenants.*.events', { callback: record });
    await nc.flush();
    clientSide = await onboard('CLIENT');
    serviceSide = await onboard('SERVICE');
  });
  after(async () => {
    await nc?.close();
    await platform?.stop();
  });

  describe('broker integrated by the client', () => {
    it('books settled deposits: cash up, funded_since and ACTIVE once the minimum is reached, a retry with the same key replayed', async () => {
      const j = clientSide;
      const first = await j.client.POST('/events/deposit/', {
        params: { header: { 'Idempotency-Key': 'cb-1' } },
        body: { data: { amount: '60.00', currency: 'EUR', portfolio: j.portfolioId, external_id: 'cb-1' } },
      });
      assert.equal(first.response.status, 201);
      const firstId = transactionAt(j, first.response.headers.get('location'));
      assert.equal(first.data!.id, firstId);
      assert.equal(first.response.headers.get('idempotency-replayed'), null);
      assert.deepEqual(
        {
          portfolio_id: first.data!.portfolio_id,
          type: first.data!.type,
          status: first.data!.status,
          quantity: first.data!.quantity,
          currency: first.data!.currency,
          external_id: first.data!.external_id,
          instrument_id: first.data!.instrument_id,
        },
        { portfolio_id: j.portfolioId, type: 'CASH', status: 'SETTLED', quantity: '60.00', currency: 'EUR', external_id: 'cb-1', instrument_id: '$EUR' },
      );
      let portfolio = await getPortfolio(j);
      assert.deepEqual(portfolio.portfolio, { $EUR: 60 });
      assert.equal(portfolio.funded_since, null, 'below the minimum funding amount of 100');
      assert.equal(portfolio.status, 'WAITING_FOR_FUNDS');
      let events = await j.events();
      assert.deepEqual(names(events), ['notifications.deposit-received']);
      assert.deepEqual(
        { ...events[0]!.data },
        {
          id: j.portfolioId,
          external_id: 'pf-CLIENT',
          owned_by_user_id: j.userId,
          owned_by_external_user_id: 'crm-CLIENT',
          amount: '60.00',
          currency: 'EUR',
          transaction_id: firstId,
        },
      );

      const second = {
        params: { header: { 'Idempotency-Key': 'cb-2' } },
        body: { data: { amount: '40.00', currency: 'EUR', portfolio: j.portfolioId, external_id: 'cb-2' } },
      };
      const booked = await j.client.POST('/events/deposit/', second);
      assert.equal(booked.response.status, 201);
      const secondId = transactionAt(j, booked.response.headers.get('location'));
      portfolio = await getPortfolio(j);
      assert.deepEqual(portfolio.portfolio, { $EUR: 100 });
      assert.equal(portfolio.status, 'ACTIVE');
      assert.ok(
        portfolio.funded_since !== null && Date.parse(portfolio.funded_since!) >= Date.parse(first.data!.datetime!),
        `funded_since ${portfolio.funded_since}`,
      );
      events = await j.events();
      assert.deepEqual(names(events), ['portfolios.status-update', 'notifications.deposit-received']);
      assert.equal(events[0]!.data.value, 'ACTIVE');
      assert.deepEqual([events[1]!.data.amount, events[1]!.data.transaction_id], ['40.00', secondId]);

      const replay = await j.client.POST('/events/deposit/', second);
      assert.equal(replay.response.status, 201);
      assert.equal(replay.response.headers.get('idempotency-replayed'), 'true');
      assert.equal(replay.response.headers.get('location'), booked.response.headers.get('location'));
      assert.deepEqual(replay.data, booked.data);
      const again = await getPortfolio(j);
      assert.deepEqual(again.portfolio, { $EUR: 100 });
      assert.equal(again.version, portfolio.version);
      assert.deepEqual(await j.events(), []);

      // The same transfer again without a key: the external_id is taken, never a second booking (docs/adr/0010-idempotency-key.md).
      const duplicate = await j.client.POST('/events/deposit/', { body: second.body });
      assert.deepEqual([duplicate.response.status, duplicate.error?.code], [409, 'duplicate_value']);
      assert.deepEqual((await getPortfolio(j)).portfolio, { $EUR: 100 });

      assert.deepEqual(
        await cashTransactions(j),
        [
          { id: firstId, type: 'CASH', status: 'SETTLED', quantity: '60.00', currency: 'EUR', external_id: 'cb-1' },
          { id: secondId, type: 'CASH', status: 'SETTLED', quantity: '40.00', currency: 'EUR', external_id: 'cb-2' },
        ].sort((a, b) => a.id.localeCompare(b.id)),
      );
    });

    it('runs a withdrawal: request event, cash available, the client books and patches, then reports it executed; the batch query finds it while pending', async () => {
      const j = clientSide;
      assert.deepEqual(await pendingDivest(j), []);
      const requested = await j.client.PATCH('/portfolios/{portfolio_id}', {
        params: { path: { portfolio_id: j.portfolioId } },
        body: { config: { manager_settings: { divest_amount: 30 } } },
      });
      assert.equal(requested.response.status, 200);
      let events = await j.events();
      assert.deepEqual(names(events), ['portfolios.divest-amount-update', 'portfolios.cash-available-for-withdrawal']);
      assert.deepEqual(
        { ...events[0]!.data },
        {
          id: j.portfolioId,
          external_id: 'pf-CLIENT',
          divest_amount: 30,
          currency: 'EUR',
          owned_by_user_id: j.userId,
          owned_by_external_user_id: 'crm-CLIENT',
        },
      );
      assert.deepEqual(
        { ...events[1]!.data },
        { id: j.portfolioId, external_id: 'pf-CLIENT', currency: 'EUR', owned_by_user_id: j.userId, owned_by_external_user_id: 'crm-CLIENT' },
      );
      assert.deepEqual(await pendingDivest(j), [j.portfolioId], 'the batch variant finds the pending withdrawal');

      const booked = await j.client.POST('/portfolios/{portfolio_id}/transactions/', {
        params: { path: { portfolio_id: j.portfolioId } },
        body: { type: 'CASH', status: 'SETTLED', quantity: '-30.00', currency: 'EUR', external_id: 'wd-1' },
      });
      assert.equal(booked.response.status, 201);
      assert.deepEqual((await getPortfolio(j)).portfolio, { $EUR: 100 }, 'creating a transaction never changes holdings');
      const patched = await j.client.PATCH('/portfolios/{portfolio_id}', {
        params: { path: { portfolio_id: j.portfolioId } },
        body: { portfolio: { $EUR: 70 }, config: { manager_settings: { divest_amount: 0 } } },
      });
      assert.equal(patched.response.status, 200);
      assert.deepEqual(patched.data!.portfolio, { $EUR: 70 });
      events = await j.events();
      assert.deepEqual(names(events), ['portfolios.divest-amount-update']);
      assert.equal(events[0]!.data.divest_amount, 0);
      assert.deepEqual(await pendingDivest(j), []);

      const executed = await j.client.POST('/events/withdraw/', {
        params: { header: { 'Idempotency-Key': 'wd-1' } },
        body: { data: { amount: '30.00', currency: 'EUR', portfolio: j.portfolioId, external_id: 'wd-1' } },
      });
      assert.equal(executed.response.status, 201);
      assert.equal(executed.response.headers.get('location'), null, 'the client booked the transaction itself');
      const record = executed.data!;
      assert.match(record.notification_event_id, ULID);
      assert.ok(Math.abs(Date.parse(record.recorded_datetime) - Date.now()) < 60_000, record.recorded_datetime);
      assert.deepEqual(
        { ...record, recorded_datetime: undefined, notification_event_id: undefined },
        {
          portfolio_id: j.portfolioId,
          amount: '30.00',
          currency: 'EUR',
          external_id: 'wd-1',
          transaction_id: null,
          recorded_datetime: undefined,
          notification_event_id: undefined,
        },
      );
      events = await j.events();
      assert.deepEqual(names(events), ['notifications.withdrawal-executed']);
      assert.equal(events[0]!.id, record.notification_event_id);
      assert.deepEqual(
        { ...events[0]!.data },
        {
          id: j.portfolioId,
          external_id: 'pf-CLIENT',
          owned_by_user_id: j.userId,
          owned_by_external_user_id: 'crm-CLIENT',
          amount: '30.00',
          currency: 'EUR',
          transaction_id: null,
        },
      );
      const after = await getPortfolio(j);
      assert.deepEqual(after.portfolio, { $EUR: 70 }, 'with CLIENT integration the service leaves the holdings to the client');
      assert.equal(after.version, patched.data!.version);
      assert.deepEqual((await cashTransactions(j)).map((t) => t.quantity).sort(), ['-30.00', '40.00', '60.00']);
    });

    it('asked the optimizer exactly once: after the first deposit, with the holdings and the policy constraints', async () => {
      const j = clientSide;
      const [lastEvent] = (await j.client.GET('/events/', { params: { query: { limit: 1000 } } })).data!.results.slice(-1);
      assert.equal(lastEvent!.action, 'withdrawal-executed');
      await relayedUpTo(j, lastEvent!.id);
      const requests = optimizerRequestsFor(j);
      assert.equal(requests.length, 1, 'no second request while the first optimization is PENDING');
      const request = requests[0]!;
      assert.match(String(request.request_id), ULID);
      assert.match(String(request.optimization_id), /^O[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.deepEqual(
        { ...request, request_id: undefined, optimization_id: undefined, requested_at: undefined },
        {
          request_id: undefined,
          optimization_id: undefined,
          requested_at: undefined,
          tenant_id: j.tenantId,
          portfolio_id: j.portfolioId,
          reason: 'DEPOSIT',
          base_currency: 'EUR',
          holdings: { $EUR: 60 },
          cash_buffer: 0,
          divest_amount: 0,
          asset_class_bands: { EQUITY: [0.5, 0.7] },
          model_portfolio: { IE00B4L5Y983: 0.6, IE00B3F81409: 0.35 },
          fractional_shares: false,
          transaction_cost_bps: 0,
          rebalancing_threshold: 0.05,
        },
      );
    });
  });

  describe('broker integrated by the service', () => {
    it('moves the cash through the broker: 202 with a PENDING transaction, settled later with the same steps', async () => {
      const j = serviceSide;
      const started = await j.client.POST('/events/deposit/', {
        params: { header: { 'Idempotency-Key': 'sb-1' } },
        body: { data: { amount: '150.00', currency: 'EUR', portfolio: j.portfolioId, external_id: 'sb-1' } },
      });
      assert.equal(started.response.status, 202);
      const id = transactionAt(j, started.response.headers.get('location'));
      assert.deepEqual(
        {
          id: started.data!.id,
          type: started.data!.type,
          status: started.data!.status,
          quantity: started.data!.quantity,
          external_id: started.data!.external_id,
        },
        { id, type: 'CASH', status: 'PENDING', quantity: '150.00', external_id: 'sb-1' },
      );

      let status: string | undefined;
      for (let i = 0; i < 100 && status !== 'SETTLED'; i++) {
        if (i > 0) await sleep(100);
        const transaction = await j.client.GET('/portfolios/{portfolio_id}/transactions/{transaction_id}', {
          params: { path: { portfolio_id: j.portfolioId, transaction_id: id } },
        });
        assert.equal(transaction.response.status, 200);
        status = transaction.data!.status;
      }
      assert.equal(status, 'SETTLED', 'the simulated broker settles within 10 s');

      const portfolio = await getPortfolio(j);
      assert.deepEqual(portfolio.portfolio, { $EUR: 150 });
      assert.equal(portfolio.status, 'ACTIVE');
      assert.ok(
        portfolio.funded_since !== null && Date.parse(portfolio.funded_since!) >= Date.parse(started.data!.datetime!),
        `funded_since ${portfolio.funded_since}`,
      );
      const events = await j.events();
      assert.deepEqual(names(events), ['portfolios.status-update', 'notifications.deposit-received']);
      assert.equal(events[0]!.data.value, 'ACTIVE');
      assert.deepEqual(
        { ...events[1]!.data },
        {
          id: j.portfolioId,
          external_id: 'pf-SERVICE',
          owned_by_user_id: j.userId,
          owned_by_external_user_id: 'crm-SERVICE',
          amount: '150.00',
          currency: 'EUR',
          transaction_id: id,
        },
      );
      for (let i = 0; i < 200 && optimizerRequestsFor(j).length === 0; i++) await sleep(50);
      const requests = optimizerRequestsFor(j);
      assert.deepEqual(
        requests.map((r) => [r.tenant_id, r.reason, r.holdings]),
        [[j.tenantId, 'DEPOSIT', { $EUR: 150 }]],
        'settlement asks the optimizer like a client-reported deposit',
      );
    });

    it('books an executed withdrawal itself: negative CASH transaction, cash and divest_amount lowered; more than the cash is a 409', async () => {
      const j = serviceSide;
      // More than the cash: the service does not pay it out itself, so the payout reported here is one it did not make
      // (docs/adr/0022-execution-and-withdrawals.md).
      const requested = await j.client.PATCH('/portfolios/{portfolio_id}', {
        params: { path: { portfolio_id: j.portfolioId } },
        body: { config: { manager_settings: { divest_amount: 200 } } },
      });
      assert.equal(requested.response.status, 200);
      let events = await j.events();
      assert.deepEqual(names(events), ['portfolios.divest-amount-update'], 'no cash-available-for-withdrawal with SERVICE integration');
      assert.equal(events[0]!.data.divest_amount, 200);

      const executed = await j.client.POST('/events/withdraw/', {
        params: { header: { 'Idempotency-Key': 'swd-1' } },
        body: { data: { amount: '25.00', currency: 'EUR', portfolio: j.portfolioId, external_id: 'swd-1' } },
      });
      assert.equal(executed.response.status, 201);
      const id = transactionAt(j, executed.response.headers.get('location'));
      assert.equal(executed.data!.transaction_id, id);
      assert.deepEqual([executed.data!.portfolio_id, executed.data!.amount, executed.data!.external_id], [j.portfolioId, '25.00', 'swd-1']);
      const transaction = await j.client.GET('/portfolios/{portfolio_id}/transactions/{transaction_id}', {
        params: { path: { portfolio_id: j.portfolioId, transaction_id: id } },
      });
      assert.deepEqual(
        {
          type: transaction.data!.type,
          status: transaction.data!.status,
          quantity: transaction.data!.quantity,
          currency: transaction.data!.currency,
          external_id: transaction.data!.external_id,
        },
        { type: 'CASH', status: 'SETTLED', quantity: '-25.00', currency: 'EUR', external_id: 'swd-1' },
      );
      const portfolio = await getPortfolio(j);
      assert.deepEqual(portfolio.portfolio, { $EUR: 125 });
      assert.equal(portfolio.config.manager_settings.divest_amount, 175);
      assert.equal(portfolio.status, 'ACTIVE');
      events = await j.events();
      assert.deepEqual(names(events), ['portfolios.divest-amount-update', 'notifications.withdrawal-executed']);
      assert.equal(events[0]!.data.divest_amount, 175);
      assert.equal(events[1]!.id, executed.data!.notification_event_id);
      assert.deepEqual([events[1]!.data.amount, events[1]!.data.transaction_id], ['25.00', id]);

      const transactionsBefore = await cashTransactions(j);
      assert.deepEqual(transactionsBefore.map((t) => t.quantity).sort(), ['-25.00', '150.00']);
      const tooMuch = await j.client.POST('/events/withdraw/', {
        params: { header: { 'Idempotency-Key': 'swd-2' } },
        body: { data: { amount: '125.01', currency: 'EUR', portfolio: j.portfolioId, external_id: 'swd-2' } },
      });
      assert.deepEqual([tooMuch.response.status, tooMuch.error?.code], [409, 'state_conflict']);
      const unchanged = await getPortfolio(j);
      assert.deepEqual(unchanged.portfolio, { $EUR: 125 });
      assert.equal(unchanged.version, portfolio.version);
      assert.deepEqual(await cashTransactions(j), transactionsBefore);
      assert.deepEqual(await j.events(), []);

      // Everything committed before the withdrawal-executed event has reached NATS once it has.
      await relayedUpTo(j, events[1]!.id);
      assert.equal(optimizerRequestsFor(j).length, 1, 'the divest_amount changes asked for no second optimization while the first is PENDING');
    });
  });
});
