import assert from 'node:assert/strict';
import { ULID, names, startFundingPlatform, type FundingPlatform, type Journey } from './funding-platform.ts';

describe('funding and withdrawal journeys (generated client)', function () {
  this.timeout(60_000);
  let funding: FundingPlatform | undefined;
  let clientSide: Journey;
  let getPortfolio: FundingPlatform['getPortfolio'];
  let cashTransactions: FundingPlatform['cashTransactions'];
  let transactionAt: FundingPlatform['transactionAt'];
  let relayedUpTo: FundingPlatform['relayedUpTo'];
  let optimizerRequestsFor: FundingPlatform['optimizerRequestsFor'];
  let pendingDivest: FundingPlatform['pendingDivest'];
  let onboard: FundingPlatform['onboard'];

  before(async () => {
    funding = await startFundingPlatform();
    ({ getPortfolio, cashTransactions, transactionAt, relayedUpTo, optimizerRequestsFor, pendingDivest, onboard } = funding);
    clientSide = await onboard('CLIENT');
  });
  after(() => funding?.stop());

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
});
