import assert from 'node:assert/strict';
import { connectNats, subjects, type NatsConnection } from '@platform/shared';
import { eventsSettled, testNatsUrl } from '@platform/test-support/database';
import { startTestPlatform } from '@platform/test-support/platform';
import { managementClient } from '../../src/clients.ts';

// What the funding journeys share: a platform whose broker answers after 50 ms, everything the relay
// publishes on NATS, a customer onboarded per broker integration, and the reads the journeys check.

type Client = ReturnType<typeof managementClient>;
export type Event = { id: string; subject: string; action: string; data: Record<string, unknown> };
type Message = { subject: string; body: Record<string, unknown> };

export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const names = (events: Event[]) => events.map((e) => `${e.subject}.${e.action}`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A customer of one tenant with a robo-advised, real-money portfolio waiting for its first funding. */
export type Journey = {
  tenantId: string;
  client: Client;
  token: string;
  userId: string;
  policyId: string;
  portfolioId: string;
  /** Outbound events since the previous call, through GET /events/. */
  events: () => Promise<Event[]>;
};

export type FundingPlatform = Awaited<ReturnType<typeof startFundingPlatform>>;

export async function startFundingPlatform() {
  // The journeys follow the first optimization while it is PENDING: no results are stored here (docs/adr/0021-optimizations.md).
  const platform = await startTestPlatform({ BROKER_SIMULATED_LATENCY_MS: '50', OPTIMIZER_RESULTS: 'false' });
  let nc: NatsConnection;
  try {
    nc = await connectNats(testNatsUrl(), 'e2e-funding');
  } catch (error) {
    await platform.stop();
    throw error;
  }
  // Everything the relay publishes on NATS, in the order it arrives on this one connection.
  const published: Message[] = [];
  const record = (_: Error | null, msg: { subject: string; json: <T>() => T }) => {
    published.push({ subject: msg.subject, body: msg.json() });
  };
  nc.subscribe(subjects.everyOptimizerRequest, { callback: record });
  nc.subscribe('tenants.*.events', { callback: record });
  await nc.flush();
  const stop = async () => {
    await nc.close();
    await platform.stop();
  };

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

  return { onboard, getPortfolio, cashTransactions, transactionAt, relayedUpTo, optimizerRequestsFor, pendingDivest, stop };
}
