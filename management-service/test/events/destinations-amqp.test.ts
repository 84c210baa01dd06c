import assert from 'node:assert/strict';
import { join } from 'node:path';
import amqp from 'amqplib';
import { startRabbitMQ, type RabbitMQ } from '@platform/dev-stack/rabbitmq';
import { freePortRun, waitFor } from '@platform/dev-stack/ports';
import { build, machineApi } from '@platform/test-support/fixtures';
import { testWorkDir } from '@platform/test-support/database';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { setDestination } from '../../src/store/destinations.ts';

/** The tenant's own queue, bound to the exchange the platform publishes to; returns the ids read. */
async function drain(url: string, queue: string): Promise<{ portfolio: string; messageId: string }[]> {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  const out: { portfolio: string; messageId: string }[] = [];
  for (;;) {
    const msg = await channel.get(queue, { noAck: true });
    if (!msg) break;
    const event = JSON.parse(msg.content.toString()) as { id: string; data: { id: string } };
    assert.equal(msg.properties.messageId, event.id, 'the AMQP message id is the event id');
    out.push({ portfolio: event.data.id, messageId: event.id });
  }
  await connection.close();
  return out;
}

describe("events forwarded to a tenant's own AMQP exchange", function () {
  this.timeout(180_000);
  let broker: RabbitMQ;
  let port: number;
  let platform: TestPlatform;
  const dir = join(testWorkDir(), `rabbitmq-${process.pid}`);

  before(async () => {
    port = await freePortRun(3);
    broker = await startRabbitMQ({ port, dir, log: () => undefined });
    const connection = await amqp.connect(broker.url);
    const channel = await connection.createChannel();
    await channel.assertExchange('bank-events', 'topic', { durable: true });
    await channel.assertQueue('bank-queue', { durable: true });
    await channel.bindQueue('bank-queue', 'bank-events', 'portfolio.#');
    await connection.close();
    platform = await startTestPlatform();
  });
  after(async () => {
    await platform?.stop();
    await broker?.stop();
  });

  it('delivers with publisher confirms, in order, and catches up after the broker was down', async () => {
    const tenant = await platform.tenant();
    await setDestination(platform.database.db, {
      tenant_id: tenant.tenantId,
      kind: 'amqp',
      url: broker.url,
      exchange: 'bank-events',
      routing_key: 'portfolio.events',
    });
    const api = await machineApi(platform, tenant);
    const owner = (await api('POST', '/users/', {})).body.id;
    const before: string[] = [];
    for (let i = 0; i < 3; i++) before.push((await api('POST', '/portfolios/', build.portfolio(owner))).body.id);
    const got: { portfolio: string; messageId: string }[] = [];
    await waitFor(
      'the first events',
      async () => {
        got.push(...(await drain(broker.url, 'bank-queue')));
        if (got.length < 3) throw new Error('not yet');
      },
      30_000,
    );
    assert.deepEqual(
      got.map((g) => g.portfolio),
      before,
    );

    await broker.stop();
    const during: string[] = [];
    for (let i = 0; i < 4; i++) during.push((await api('POST', '/portfolios/', build.portfolio(owner))).body.id);
    broker = await startRabbitMQ({ port, dir, log: () => undefined });
    const after: { portfolio: string; messageId: string }[] = [];
    await waitFor(
      'the events of the outage',
      async () => {
        after.push(...(await drain(broker.url, 'bank-queue')));
        if (!during.every((id) => after.some((a) => a.portfolio === id))) throw new Error('not yet');
      },
      60_000,
    );
    assert.deepEqual([...new Set(after.map((a) => a.portfolio))], during, 'every event of the outage, in order (durable queue, persistent messages)');
  });
});
