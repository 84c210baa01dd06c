import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeliverPolicy, connectNats, createLogger, ensureStreams, jetstream, newId, newUlid, streams, subjects, type NatsConnection } from '@platform/shared';
import { startOwnNats } from '@platform/test-support/database';
import type { NatsServer } from '@platform/dev-stack/nats-server';
import { startOptimizerConsumer, tenantDurable } from '../../src/optimizer/consumer.ts';
import { loadOptimizer, type OptimizerRequest, type OptimizerResult } from '../../src/optimizer/engine.ts';
import { OptimizerClosed, type OptimizerScheduler } from '../../src/optimizer/solving.ts';
import { optimizerPool, type OptimizerExecutor } from '../../src/workers/optimizer-pool.ts';
import { optimizerScheduler } from '../../src/workers/optimizer-scheduler.ts';
import { BD1, EQ1, FACTS, optimizerRequest } from './fixtures.ts';

// The consumer of optimizer requests in front of the worker threads, on a NATS server of its own
// (docs/adr/0020-optimizer-model.md): tenants take turns, a tenant's backlog beyond JetStream's
// window of unacknowledged messages does not stand in front of another's request, nothing is
// delivered twice, an engine failure is answered as before, and a solve in flight when the
// consumer stops is not acknowledged. Orders are asserted, never
// durations: a gate holds the thread's first solve until the test has seen the queues it wants.

const PER_TENANT = 4;

/** A request of the tenant with ids of its own: each is answered and acknowledged apart. */
function request(tenantId: string, overrides: Partial<OptimizerRequest> = {}): OptimizerRequest {
  return optimizerRequest({
    request_id: newUlid(),
    tenant_id: tenantId,
    portfolio_id: newId('P'),
    optimization_id: newId('O'),
    requested_at: new Date().toISOString(),
    holdings: { $EUR: 10_000 },
    model_portfolio: { [EQ1]: 0.5, [BD1]: 0.5 },
    ...overrides,
  });
}

/**
 * The real pool behind a gate: every solve waits until `open()`; closing hands back what waits at
 * the gate like the pool does what it holds. `started` lists the tenants of the solves in the
 * order they reached the thread.
 */
function gated(pool: OptimizerExecutor, alter: (r: OptimizerRequest) => OptimizerRequest = (r) => r) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let shut!: (error: unknown) => void;
  const closing = new Promise<never>((_, reject) => (shut = reject));
  closing.catch(() => undefined);
  const started: string[] = [];
  const executor: OptimizerExecutor = {
    slots: pool.slots,
    solve: async (r, facts) => {
      started.push(r.tenant_id);
      await Promise.race([gate, closing]);
      return pool.solve(alter(r), facts);
    },
    close: async () => {
      shut(new OptimizerClosed());
      await pool.close();
    },
  };
  return { executor, started, open };
}

/** Polls `check` until it holds (a state the consumer reaches, not a duration). */
async function until(what: string, check: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await sleep(50);
  }
  assert.fail(`never: ${what}`);
}

describe('optimizer consumer on worker threads', function () {
  this.timeout(120_000);
  let nats: NatsServer;
  let nc: NatsConnection;
  let consumerNc: NatsConnection;
  const logger = createLogger('optimizer-test', 'warn');
  const stops: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    nats = await startOwnNats();
    nc = await connectNats(nats.url, 'optimizer-test');
    consumerNc = await connectNats(nats.serviceUrls.data, 'optimizer-test-consumer');
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop().catch(() => undefined);
    await consumerNc?.close();
    await nc?.close();
    await nats?.stop();
  });

  const start = async (scheduler: OptimizerScheduler, ackWaitMs?: number) => {
    const consumer = await startOptimizerConsumer({
      ackWaitMs,
      nats: consumerNc,
      scheduler,
      facts: async () => FACTS,
      logger,
      perTenant: PER_TENANT,
      discoverEveryMs: 100,
    });
    stops.push(consumer.stop);
    return consumer;
  };

  const publish = (r: OptimizerRequest) => jetstream(nc).publish(subjects.optimizerRequests(r.tenant_id), JSON.stringify(r), { msgID: r.request_id });

  /** Every result in the stream, in the order they were published. */
  async function results(): Promise<OptimizerResult[]> {
    const consumer = await jetstream(nc).consumers.get(streams.platform.name, {
      filter_subjects: subjects.optimizerResults,
      deliver_policy: DeliverPolicy.All,
    });
    const out: OptimizerResult[] = [];
    const pending = (await consumer.info()).num_pending;
    if (pending === 0) return out;
    for await (const m of await consumer.fetch({ max_messages: pending, expires: 2000 })) {
      out.push(m.json<OptimizerResult>());
      if (out.length === pending) break;
    }
    return out;
  }

  /** A tenant's durable consumer of its requests; requestsOpen: delivered and not acknowledged, or not delivered yet. */
  const durable = async (tenant: string) => (await jetstream(nc).consumers.get(streams.platform.name, tenantDurable(tenant))).info();
  const requestsOpen = async (...tenants: string[]) => {
    let open = 0;
    for (const tenant of tenants) {
      const info = await durable(tenant);
      open += info.num_ack_pending + info.num_pending;
    }
    return open;
  };

  it("answers tenant B's request next behind a backlog of A's larger than JetStream's window, and every request of both once, none delivered twice", async () => {
    const { executor, started, open } = gated(optimizerPool(1));
    const scheduler = optimizerScheduler(executor);
    // More than the 1,000 unacknowledged messages a consumer hands out by default.
    const flood = Array.from({ length: 1100 }, () => request('A'));
    await ensureStreams(nc);
    await Promise.all(flood.map(publish));
    await start(scheduler);
    await until("A's first request holds the thread", () => started.length === 1);
    const other = request('B');
    await publish(other);

    // A's next requests of its share wait; B's, published after all of A's, is read through B's
    // own consumer and waits too.
    await until("B's request waits for the thread", () => scheduler.waiting('B') === 1);
    await until("A's share is read", () => scheduler.waiting('A') === PER_TENANT - 1);
    assert.deepEqual(started, ['A']);
    const a = await durable('A');
    assert.equal(a.num_ack_pending, PER_TENANT, 'no more of A is taken than its share');
    assert.equal(a.num_pending, flood.length - PER_TENANT, 'the rest of A waits in the stream');
    open();

    await until('every request is answered', async () => (await results()).length >= flood.length + 1);
    const answered = await results();
    assert.deepEqual(started.slice(0, 2), ['A', 'B'], 'B reached the thread right after the solve that held it');
    assert.deepEqual(
      answered.slice(0, 2).map((r) => r.tenant_id),
      ['A', 'B'],
    );
    assert.equal(answered[1]!.request_id, other.request_id);
    assert.deepEqual(answered.map((r) => r.request_id).sort(), [...flood, other].map((r) => r.request_id).sort(), 'each request answered once');
    assert.ok(answered.every((r) => r.status === 'SUCCESS'));
    await until('every request is acknowledged', async () => (await requestsOpen('A', 'B')) === 0);
    for (const tenant of ['A', 'B']) assert.equal((await durable(tenant)).num_redelivered, 0, `no request of ${tenant} was delivered twice`);
  });

  it('keeps a request that waits for a thread longer than the acknowledgement time marked in progress: none is delivered again', async () => {
    const { executor, started, open } = gated(optimizerPool(1));
    // Half its share, so that the consumer keeps pulling: a request given out again would come to it.
    const waiting = Array.from({ length: PER_TENANT / 2 }, () => request('A'));
    await ensureStreams(nc);
    for (const r of waiting) await publish(r);
    const scheduler = optimizerScheduler(executor);
    await start(scheduler, 1000);
    await until("A's requests are read", () => started.length === 1 && scheduler.waiting('A') === waiting.length - 1);
    await sleep(3000); // three acknowledgement times with the thread held
    assert.equal((await durable('A')).num_redelivered, 0, 'no request was given out again meanwhile');
    open();
    await until('every request is answered', async () => (await results()).length === waiting.length);
    assert.equal((await durable('A')).num_redelivered, 0);
    assert.deepEqual((await results()).map((r) => r.request_id).sort(), waiting.map((r) => r.request_id).sort(), 'each answered once');
    assert.equal(started.length, waiting.length, 'each solved once');
  });

  it('answers FAILURE, as on the event loop, when the engine throws in its thread, and acknowledges the request', async () => {
    const inline = await loadOptimizer();
    const broken = (r: OptimizerRequest) => ({ ...r, model_portfolio: null as unknown as OptimizerRequest['model_portfolio'] });
    assert.throws(() => inline(broken(request('A')), FACTS), 'the engine throws on the event loop too');
    const { executor, open } = gated(optimizerPool(1), broken);
    open();
    await start(optimizerScheduler(executor));
    const r = request('A');
    await publish(r);
    await until('the request is answered', async () => (await results()).length === 1);
    const [result] = await results();
    assert.equal(result!.request_id, r.request_id);
    assert.deepEqual(
      { status: result!.status, is_recommended: result!.is_recommended, orders: result!.orders, detail: result!.detail },
      { status: 'FAILURE', is_recommended: false, orders: {}, detail: 'the optimizer failed on this request' },
    );
    await until('the request is acknowledged', async () => (await requestsOpen('A')) === 0);
  });

  it('leaves a request whose solve is in flight unacknowledged when it stops: it is answered after the next start', async () => {
    const { executor, started } = gated(optimizerPool(1));
    const first = await start(optimizerScheduler(executor));
    const r = request('A');
    const { seq } = await publish(r);
    await until('the solve is on the thread', () => started.length === 1);
    await first.stop();
    assert.deepEqual(await results(), [], 'no result published');
    const info = await durable('A');
    assert.equal(info.num_ack_pending, 1, 'the request is held for redelivery');
    assert.ok(info.ack_floor.stream_seq < seq, 'the request is not acknowledged');

    const again = optimizerPool(1);
    await start(optimizerScheduler(again));
    await until('the request is answered after the restart', async () => (await results()).length === 1);
    const [result] = await results();
    assert.equal(result!.request_id, r.request_id);
    assert.equal(result!.status, 'SUCCESS');
    await until('the request is acknowledged', async () => (await requestsOpen('A')) === 0);
  });
});
