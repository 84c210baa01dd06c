import assert from 'node:assert/strict';
import { waitFor } from '@platform/dev-stack/ports';
import { eventsSettled } from '@platform/test-support/database';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

type Envelope = { id: string; subject: string; action: string; data: Record<string, unknown> };

describe('withdrawals (docs/adr/0009-funding-modes.md)', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  const account = { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000' };

  /** One tenant of the given integration with a funded robo portfolio and a poller of its events. */
  async function setup(brokerIntegration: 'CLIENT' | 'SERVICE', cash: string) {
    const api = await machineApi(platform, await platform.tenant(undefined, { brokerIntegration }));
    const owner = (await api('POST', '/users/', build.user())).body.id;
    const policy = (await api('POST', '/policies/', build.policy())).body.id;
    const id = (await api('POST', '/portfolios/', build.roboPortfolio(owner, { policy_id: policy }, { brokerage_account: account }))).body.id as string;
    const deposit = await api('POST', '/events/deposit/', { data: { amount: cash, currency: 'EUR', portfolio: id, external_id: `dep-${id}` } });
    assert.equal(deposit.status, brokerIntegration === 'CLIENT' ? 201 : 202);
    // With the service's broker, the simulated broker settles the deposit in the background.
    await waitFor('deposit settled', async () => assert.equal((await api('GET', deposit.headers.get('location')!)).body.status, 'SETTLED'));
    let cursor = '';
    const events = async (): Promise<Envelope[]> => {
      await eventsSettled(platform.database.db);
      const res = await api('GET', `/events/?limit=1000${cursor ? `&after=${cursor}` : ''}`);
      cursor = res.body.next_cursor;
      return res.body.results;
    };
    await events();
    const requests = async () =>
      (
        await platform.database
          .db('outbox')
          .select('envelope')
          .where({ entity_id: id })
          .whereLike('nats_subject', 'platform.optimizer.requests.%')
          .orderBy('seq')
      ).map((r) => r.envelope);
    const get = async () => (await api('GET', `/portfolios/${id}`)).body;
    return { api, id, events, requests, get };
  }
  const names = (events: Envelope[]) => events.map((e) => `${e.subject}.${e.action}`);
  const settings = (p: { config: { manager_settings: Record<string, unknown> } }) => p.config.manager_settings;

  before(async () => {
    platform = await startTestPlatform({ BROKER_SIMULATED_LATENCY_MS: '0' });
  });
  after(() => platform.stop());

  it('client integration: a divest_amount PATCH emits the withdrawal event and cash-available, and requests an optimization', async () => {
    const t = await setup('CLIENT', '100.00');
    // The deposit already asked the optimizer; let that optimization finish so a new one can start.
    await platform.database
      .db('entities')
      .where({ type: 'optimizations', parent_id: t.id })
      .update({ doc: platform.database.db.raw(`jsonb_set(doc, '{status}', '"SUCCESS"')`) });
    assert.equal((await t.api('PATCH', `/portfolios/${t.id}`, { config: { manager_settings: { divest_amount: 30 } } })).status, 200);
    const emitted = await t.events();
    assert.deepEqual(names(emitted), ['portfolios.divest-amount-update', 'portfolios.cash-available-for-withdrawal']);
    assert.deepEqual([emitted[0]!.data.divest_amount, emitted[0]!.data.currency], [30, 'EUR']);
    const requests = await t.requests();
    assert.deepEqual(
      requests.map((r) => [r.reason, r.divest_amount]),
      [
        ['DEPOSIT', 0],
        ['DIVEST_AMOUNT', 30],
      ],
    );
    // More than the cash: the withdrawal event, but no cash-available.
    await t.api('PATCH', `/portfolios/${t.id}`, { config: { manager_settings: { divest_amount: 1e100 } } });
    assert.deepEqual(names(await t.events()), ['portfolios.divest-amount-update']);
  });

  it('client integration: the batch query finds pending withdrawals; the executed withdrawal is recorded with its notification', async () => {
    const t = await setup('CLIENT', '100.00');
    const pending = `/portfolios/?query=${encodeURIComponent('config.manager_settings.divest_amount neq 0 and config.manager_settings.divest_amount neq null')}&limit=100`;
    const ids = async () => ((await t.api('GET', pending)).body.results as { id: string }[]).map((p) => p.id);
    assert.equal((await ids()).includes(t.id), false);
    await t.api('PATCH', `/portfolios/${t.id}`, { config: { manager_settings: { divest_amount: 40 } } });
    assert.equal((await ids()).includes(t.id), true);
    await t.api('POST', `/portfolios/${t.id}/transactions/`, build.transaction({ quantity: '-40.00', external_id: 'wd-c1' }));
    await t.api('PATCH', `/portfolios/${t.id}`, { portfolio: { $EUR: 60 }, config: { manager_settings: { divest_amount: 0 } } });
    assert.equal((await ids()).includes(t.id), false);
    await t.events();
    const res = await t.api('POST', '/events/withdraw/', { data: { amount: '40.00', currency: 'EUR', portfolio: t.id, external_id: 'wd-c1' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('location'), null);
    const [notification, ...rest] = await t.events();
    assert.equal(rest.length, 0);
    assert.equal(`${notification!.subject}.${notification!.action}`, 'notifications.withdrawal-executed');
    assert.deepEqual(
      { ...res.body, recorded_datetime: undefined },
      {
        portfolio_id: t.id,
        amount: '40.00',
        currency: 'EUR',
        external_id: 'wd-c1',
        transaction_id: null,
        notification_event_id: notification!.id,
        recorded_datetime: undefined,
      },
    );
    assert.match(res.body.recorded_datetime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual([notification!.data.amount, notification!.data.transaction_id], ['40.00', null]);
    // The client's books are its own: cash is what it patched.
    assert.equal((await t.get()).portfolio.$EUR, 60);
    assertProblem(
      await t.api('POST', '/events/withdraw/', { data: { amount: '1', currency: 'EUR', portfolio: t.id, external_id: 'wd-c1' } }),
      409,
      'duplicate_value',
    );
  });

  it('service integration: books the negative CASH transaction, lowers cash and divest_amount, without cash-available events', async () => {
    const t = await setup('SERVICE', '100.00');
    // More than the cash, so the service does not pay it out itself (docs/adr/0022-execution-and-withdrawals.md).
    await t.api('PATCH', `/portfolios/${t.id}`, { config: { manager_settings: { divest_amount: 150 } } });
    assert.deepEqual(names(await t.events()), ['portfolios.divest-amount-update']);
    const res = await t.api('POST', '/events/withdraw/', { data: { amount: '25.00', currency: 'EUR', portfolio: t.id, external_id: 'wd-s1' } });
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.transaction_id, /^T/);
    assert.equal(res.headers.get('location'), `/portfolios/${t.id}/transactions/${res.body.transaction_id}`);
    const booked = (await t.api('GET', res.headers.get('location')!)).body;
    assert.deepEqual([booked.type, booked.status, booked.quantity, booked.external_id], ['CASH', 'SETTLED', '-25.00', 'wd-s1']);
    const p = await t.get();
    assert.deepEqual([p.portfolio.$EUR, settings(p).divest_amount], [75, 125]);
    assert.deepEqual(names(await t.events()), ['portfolios.divest-amount-update', 'notifications.withdrawal-executed']);
  });

  it('service integration: refuses a withdrawal the cash does not cover, and changes nothing', async () => {
    const t = await setup('SERVICE', '10.00');
    const before = await t.get();
    assertProblem(await t.api('POST', '/events/withdraw/', { data: { amount: '10.01', currency: 'EUR', portfolio: t.id } }), 409, 'state_conflict');
    const after = await t.get();
    assert.deepEqual([after.version, after.portfolio.$EUR], [before.version, 10]);
    assert.equal((await t.api('GET', `/portfolios/${t.id}/transactions/`)).body.count, 1); // the deposit
    assert.deepEqual(await t.events(), []);
  });

  it('refuses unknown portfolios (404), another currency (422) and paper money (409)', async () => {
    const t = await setup('CLIENT', '10.00');
    assertProblem(
      await t.api('POST', '/events/withdraw/', { data: { amount: '1', currency: 'EUR', portfolio: 'P01HZC48CNR9YNY5M4C8F5S2HT9' } }),
      404,
      'not_found',
    );
    const usd = await t.api('POST', '/events/withdraw/', { data: { amount: '1', currency: 'USD', portfolio: t.id } });
    assertProblem(usd, 422, 'validation_failed');
    assert.deepEqual(usd.body.errors[0].loc, ['body', 'data', 'currency']);
    const owner = (await t.api('GET', `/portfolios/${t.id}`)).body.owned_by_user_id;
    const paper = (
      await t.api(
        'POST',
        '/portfolios/',
        build.portfolio(owner, { money_type: 'PAPER_MONEY', config: { manager: 'ROBO_ADVISOR_ADVISORY', manager_version: 1, manager_settings: {} } }),
      )
    ).body.id;
    await t.events();
    assertProblem(await t.api('POST', '/events/withdraw/', { data: { amount: '1', currency: 'EUR', portfolio: paper } }), 409, 'state_conflict');
    assert.deepEqual(await t.events(), []);
  });
});
