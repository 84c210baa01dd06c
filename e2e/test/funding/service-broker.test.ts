import assert from 'node:assert/strict';
import { names, sleep, startFundingPlatform, type FundingPlatform, type Journey } from './funding-platform.ts';

describe('funding and withdrawal journeys (generated client)', function () {
  this.timeout(60_000);
  let funding: FundingPlatform | undefined;
  let serviceSide: Journey;
  let getPortfolio: FundingPlatform['getPortfolio'];
  let cashTransactions: FundingPlatform['cashTransactions'];
  let transactionAt: FundingPlatform['transactionAt'];
  let relayedUpTo: FundingPlatform['relayedUpTo'];
  let optimizerRequestsFor: FundingPlatform['optimizerRequestsFor'];
  let onboard: FundingPlatform['onboard'];

  before(async () => {
    funding = await startFundingPlatform();
    ({ getPortfolio, cashTransactions, transactionAt, relayedUpTo, optimizerRequestsFor, onboard } = funding);
    serviceSide = await onboard('SERVICE');
  });
  after(() => funding?.stop());

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
