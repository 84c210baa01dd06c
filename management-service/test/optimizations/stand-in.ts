import assert from 'node:assert/strict';
import { AckPolicy, DeliverPolicy, connectNats, ensureStreams, jetstream, jetstreamManager, streams, subjects } from '@platform/shared';
import type { components } from '@platform/api-types/events';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

export type OptimizerRequest = components['schemas']['OptimizerRequest'];
export type OptimizerResult = components['schemas']['OptimizerResult'];

/** A well-formed optimization id that no tenant has. */
export const UNKNOWN_O = 'O01HZ1AGR63S781D0FSA833PT5T';

/** Orders of a recommended SUCCESS, as the optimizer sends them. */
export const ORDERS = { IE00B4L5Y983: { shares: 3, expected_share_price: 98.42, expected_transaction_cost: 0.15 } };

/**
 * Stands in for the data service's optimizer: reads the requests from JetStream through the durable consumer the
 * optimizer uses, and publishes results on platform.optimizer.results with the headers the optimizer sets.
 */
export type OptimizerStandIn = {
  /** Every request read so far, in order. */
  requests: OptimizerRequest[];
  /** The first request (not taken before) that matches, waiting for it up to `timeoutMs`. */
  take: (match: (r: OptimizerRequest) => boolean, timeoutMs?: number) => Promise<OptimizerRequest>;
  /** Publishes the result of a request: a recommended SUCCESS with ORDERS unless `over` says otherwise. */
  answer: (request: OptimizerRequest, over?: Partial<OptimizerResult>) => Promise<void>;
  /** Publishes any payload on the results subject with the given Nats-Msg-Id (messages that break the contract). */
  publish: (payload: string, messageId: string) => Promise<void>;
  stop: () => Promise<void>;
};

export async function startOptimizerStandIn(natsUrl: string): Promise<OptimizerStandIn> {
  const nc = await connectNats(natsUrl, 'optimizer-stand-in');
  await ensureStreams(nc);
  const jsm = await jetstreamManager(nc);
  await jsm.consumers
    .add(streams.platform.name, {
      durable_name: 'optimizer-stand-in',
      filter_subject: subjects.everyOptimizerRequest,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    })
    .catch(() => undefined);
  const js = jetstream(nc);
  const messages = await (await js.consumers.get(streams.platform.name, 'optimizer-stand-in')).consume();
  const requests: OptimizerRequest[] = [];
  const loop = (async () => {
    for await (const message of messages) {
      requests.push(message.json<OptimizerRequest>());
      message.ack();
    }
  })();
  const taken = new Set<string>();
  return {
    requests,
    take: async (match, timeoutMs = 15_000) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = requests.find((r) => !taken.has(r.request_id) && match(r));
        if (found) {
          taken.add(found.request_id);
          return found;
        }
        if (Date.now() > until) throw new Error(`no optimizer request arrived within ${timeoutMs} ms (read so far: ${requests.length})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    answer: async (request, over = {}) => {
      const result: OptimizerResult = {
        request_id: request.request_id,
        tenant_id: request.tenant_id,
        portfolio_id: request.portfolio_id,
        optimization_id: request.optimization_id,
        status: 'SUCCESS',
        is_recommended: true,
        orders: ORDERS,
        solved_at: new Date().toISOString(),
        ...over,
      };
      await js.publish(subjects.optimizerResults, JSON.stringify(result), { msgID: `${request.request_id}:result` });
    },
    publish: async (payload, messageId) => {
      await js.publish(subjects.optimizerResults, payload, { msgID: messageId });
    },
    stop: async () => {
      await messages.close();
      await loop;
      await nc.drain();
    },
  };
}

/** Polls `read` until `done` holds of its value (or fails after `timeoutMs` with the last value). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value).slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The platform on a NATS server of its own with the stand-in instead of the data service's optimizer. */
export async function startOptimizationPlatform(env: Record<string, string> = {}): Promise<{ platform: TestPlatform; optimizer: OptimizerStandIn }> {
  const platform = await startTestPlatform({ OPTIMIZER: 'false', ...env }, { ownNats: true });
  const optimizer = await startOptimizerStandIn(platform.natsUrl);
  return { platform, optimizer };
}

type Envelope = { subject: string; action: string; data: Record<string, unknown> };

/** One tenant's world: its machine client, an owner, a policy, and builders of robo-advised portfolios. */
export async function optimizationTenant(platform: TestPlatform, options: { brokerIntegration?: 'CLIENT' | 'SERVICE' } = {}) {
  const tenant = await platform.tenant(undefined, options);
  const api = await machineApi(platform, tenant);
  const created = async (path: string, body: unknown) => {
    const res = await api('POST', path, body);
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  const owner = await created('/users/', build.user({ external_id: `crm-${tenant.tenantId}` }));
  const policy = await created('/policies/', build.policy({ config: { model_portfolio: { IE00B4L5Y983: 0.9 }, cash_buffer: 0.02 } }));
  const countOf = async (table: string) => (await platform.database.db(table).count('* as n').where({ tenant_id: tenant.tenantId }))[0]!.n;
  let cursor = '';
  const world = {
    tenant,
    api,
    owner,
    policy,
    created,
    /** A robo-advised portfolio of the owner following the policy (discretionary unless `manager` says otherwise). */
    portfolio: (settings: Record<string, unknown> = {}, over: Record<string, unknown> = {}, manager = 'ROBO_ADVISOR_DISCRETIONARY') =>
      created(
        '/portfolios/',
        build.portfolio(owner, {
          portfolio: { $EUR: 1000 },
          config: { manager, manager_version: 1, manager_settings: { policy_id: policy, ...settings } },
          ...over,
        }),
      ),
    /** The tenant's events after those already read (GET /events/). */
    events: async (): Promise<Envelope[]> => {
      const res = await api('GET', `/events/?limit=1000${cursor ? `&after=${cursor}` : ''}`);
      assert.equal(res.status, 200, res.text);
      cursor = res.body.next_cursor;
      return res.body.results;
    },
    /** The optimizer requests of a portfolio written to the outbox, oldest first. */
    requestsOf: async (portfolioId: string): Promise<OptimizerRequest[]> =>
      (
        await platform.database
          .db('outbox')
          .select('envelope')
          .where({ entity_id: portfolioId })
          .whereLike('nats_subject', 'platform.optimizer.requests.%')
          .orderBy('seq')
      ).map((r: { envelope: OptimizerRequest }) => r.envelope),
    /** The portfolio's optimizations as stored, oldest first. */
    optimizationsOf: async (portfolioId: string) =>
      platform.database.db('entities').select('id', 'version', 'doc').where({ type: 'optimizations', parent_id: portfolioId }).orderBy('id'),
    /** The operator's request of an optimization of the portfolio (202): the new optimization's id. */
    request: async (portfolio: string, body: unknown = {}, headers: Record<string, string> = {}) => {
      const res = await api('POST', `/portfolios/${portfolio}/optimizations/`, body, headers);
      assert.equal(res.status, 202, res.text);
      return res.body.id as string;
    },
    /** Everything a refusal must leave alone: the portfolio's optimizations, the tenant's outbox and its optimizer requests. */
    untouched: async (portfolio: string) => ({
      optimizations: await world.optimizationsOf(portfolio),
      outbox: await countOf('outbox'),
      requests: await countOf('optimization_requests'),
    }),
    optimization: async (id: string) => {
      const res = await api('GET', `/optimizations/${id}`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    },
  };
  await world.events();
  return world;
}

export type OptimizationTenant = Awaited<ReturnType<typeof optimizationTenant>>;
export type { Api };

/** An optimization of the portfolio that the stand-in answered (a recommended SUCCESS unless `over` says otherwise), once stored. */
export async function answeredOptimization(world: OptimizationTenant, optimizer: OptimizerStandIn, portfolio: string, over: Record<string, unknown> = {}) {
  const id = await world.request(portfolio);
  await optimizer.answer(await optimizer.take((r) => r.optimization_id === id), over);
  return eventually(
    () => world.optimization(id),
    (o) => o.status !== 'PENDING',
  );
}

/**
 * The platform with the stand-in and the settlement job off (an optimization handed to execution stays waiting for
 * it), a tenant's world with its owner and another customer as callers, and a second tenant.
 */
export async function startOptimizationWorlds() {
  const { platform, optimizer } = await startOptimizationPlatform({ BROKER_SETTLEMENT: 'false' });
  const world = await optimizationTenant(platform);
  const stranger = await optimizationTenant(platform);
  const asOwner = await userApi(platform, world.api, world.owner);
  const asOther = await userApi(platform, world.api, await world.created('/users/', { first_name: 'Eve' }));
  const stop = async () => {
    await optimizer.stop();
    await platform.stop();
  };
  return { platform, optimizer, world, stranger, asOwner, asOther, stop };
}
export type OptimizationWorlds = Awaited<ReturnType<typeof startOptimizationWorlds>>;
