import assert from 'node:assert/strict';
import { DeliverPolicy, connectNats, jetstream, jetstreamManager, newId, newUlid, streams, subjects, type NatsConnection } from '@platform/shared';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import type { OptimizerRequest, OptimizerResult } from '../../src/optimizer/engine.ts';
import { dataClient } from '../support/data-client.ts';
import { buildFixture } from '../support/reference-fixture.ts';

// The optimizer's NATS side: requests in on platform.optimizer.requests, one result each out on
// platform.optimizer.results, prices and asset classes read from the store as the tenant sees them.

const EQUITY = 'XE0000000011';
const BONDS = 'XF0000000012';
const DOLLARS = 'XU0000000013';
const instruments = [
  { isin: EQUITY, name: 'Fixture equity', asset_class: 'EQUITY', currency: 'EUR', price: 50 },
  { isin: BONDS, name: 'Fixture bonds', asset_class: 'FIXED_INCOME', currency: 'EUR', price: 20 },
  { isin: DOLLARS, name: 'Fixture dollar equity', asset_class: 'EQUITY', currency: 'USD', price: 10 },
];

function request(tenantId: string, overrides: Partial<OptimizerRequest> = {}): OptimizerRequest {
  return {
    request_id: newUlid(),
    tenant_id: tenantId,
    portfolio_id: newId('P'),
    optimization_id: newId('O'),
    reason: 'DEPOSIT',
    requested_at: new Date().toISOString(),
    base_currency: 'EUR',
    holdings: { $EUR: 1000 },
    cash_buffer: 0,
    divest_amount: 0,
    asset_class_bands: {},
    model_portfolio: { [EQUITY]: 0.5, [BONDS]: 0.5 },
    fractional_shares: false,
    transaction_cost_bps: 0,
    rebalancing_threshold: 0.05,
    ...overrides,
  };
}

describe('optimizer over NATS', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let nc: NatsConnection;

  before(async () => {
    const fixture = await buildFixture({ instruments });
    platform = await startTestPlatform(fixture.env, { ownNats: true });
    tenant = await platform.tenant();
    nc = await connectNats(platform.natsUrl, 'optimizer-test');
  });
  after(async () => {
    await nc?.close();
    await platform?.stop();
  });

  /** Publishes on the tenant's subject: the request's own tenant unless `on` names another. */
  const publish = (body: unknown, on?: string) => {
    const tenantId = on ?? (body as { tenant_id?: string }).tenant_id ?? tenant.tenantId;
    return jetstream(nc).publish(subjects.optimizerRequests(tenantId), typeof body === 'string' ? body : JSON.stringify(body), { msgID: newUlid() });
  };

  /** Every result in the stream so far, with its Nats-Msg-Id. */
  async function results(): Promise<{ msgId: string | undefined; result: OptimizerResult }[]> {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(streams.platform.name);
    const consumer = await jetstream(nc).consumers.get(streams.platform.name, {
      filter_subjects: subjects.optimizerResults,
      deliver_policy: DeliverPolicy.All,
    });
    const out: { msgId: string | undefined; result: OptimizerResult }[] = [];
    if (info.state.messages === 0) return out;
    const messages = await consumer.fetch({ max_messages: 1000, expires: 1000 });
    for await (const m of messages) out.push({ msgId: m.headers?.get('Nats-Msg-Id'), result: m.json<OptimizerResult>() });
    return out;
  }

  async function resultOf(requestId: string): Promise<{ msgId: string | undefined; result: OptimizerResult }> {
    for (let i = 0; i < 100; i++) {
      const found = (await results()).filter((r) => r.result.request_id === requestId);
      if (found.length > 0) return found[0]!;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no result for ${requestId}`);
  }

  it('answers a request with one result whose Nats-Msg-Id is <request_id>:result, priced from the store', async () => {
    const sent = request(tenant.tenantId);
    await publish(sent);
    const { msgId, result } = await resultOf(sent.request_id);
    assert.equal(msgId, `${sent.request_id}:result`);
    assert.equal(result.optimization_id, sent.optimization_id);
    assert.equal(result.portfolio_id, sent.portfolio_id);
    assert.equal(result.tenant_id, tenant.tenantId);
    assert.equal(result.status, 'SUCCESS');
    assert.equal(result.is_recommended, true);
    // 1000 EUR half in each: 10 shares at 50 and 25 at 20.
    assert.deepEqual(result.orders[EQUITY], { shares: 10, expected_share_price: 50, expected_transaction_cost: 0 });
    assert.deepEqual(result.orders[BONDS], { shares: 25, expected_share_price: 20, expected_transaction_cost: 0 });
  });

  it("uses the tenant's own price when it stores one (custom values win)", async () => {
    const client = dataClient(platform.dataUrl, tenant);
    const stored = await client.post('/data/custom/reference/batch/', { data: [{ instrument_id: EQUITY, reference_data: { price: 100 } }] });
    assert.ok(stored.status < 300, JSON.stringify(stored.body));
    const sent = request(tenant.tenantId);
    await publish(sent);
    const { result } = await resultOf(sent.request_id);
    assert.equal(result.orders[EQUITY]?.expected_share_price, 100);
    assert.equal(result.orders[EQUITY]?.shares, 5);
    const other = await platform.tenant();
    const theirs = request(other.tenantId);
    await publish(theirs);
    assert.equal((await resultOf(theirs.request_id)).result.orders[EQUITY]?.expected_share_price, 50, "another tenant's price is the provider's");
    await client.post('/data/custom/reference/clear/', {});
  });

  it('answers FAILURE naming an instrument priced in another currency', async () => {
    const sent = request(tenant.tenantId, { model_portfolio: { [EQUITY]: 0.5, [DOLLARS]: 0.5 } });
    await publish(sent);
    const { result } = await resultOf(sent.request_id);
    assert.equal(result.status, 'FAILURE');
    assert.deepEqual(result.orders, {});
    assert.match(result.detail ?? '', new RegExp(DOLLARS));
  });

  it('drops what is not a request of the contract and keeps answering the next ones', async () => {
    const before = (await results()).length;
    await publish('not json at all');
    await publish({ ...request(tenant.tenantId), holdings: { $EUR: 'a lot' } });
    const sent = request(tenant.tenantId);
    await publish(sent);
    await resultOf(sent.request_id);
    assert.equal((await results()).length, before + 1, 'one result, for the valid request only');
  });

  it("drops a request on a tenant's subject that names another tenant, and answers the tenant's next one", async () => {
    const other = await platform.tenant();
    const before = (await results()).length;
    const forged = request(other.tenantId);
    await publish(forged, tenant.tenantId);
    const sent = request(tenant.tenantId);
    await publish(sent);
    await resultOf(sent.request_id);
    await new Promise((r) => setTimeout(r, 300));
    const after = await results();
    assert.equal(after.length, before + 1, "one result, for the request of the subject's own tenant");
    assert.ok(!after.some((r) => r.result.request_id === forged.request_id), 'the forged request is not answered');
  });

  it('publishes one result when the same request arrives twice', async () => {
    const sent = request(tenant.tenantId);
    await publish(sent);
    await publish(sent); // another message id: the stream keeps both requests
    await resultOf(sent.request_id);
    await new Promise((r) => setTimeout(r, 500));
    const found = (await results()).filter((r) => r.result.request_id === sent.request_id);
    assert.equal(found.length, 1, 'the stream de-duplicates the second result by its Nats-Msg-Id');
  });
});
