import assert from 'node:assert/strict';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { startMosquitto, type Mosquitto } from '@platform/dev-stack/mosquitto';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { build, machineApi } from '@platform/test-support/fixtures';
import { testWorkDir } from '@platform/test-support/database';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { setDestination } from '../../src/store/destinations.ts';

type Received = { topic: string; id: string; subject: string; dataId: string };

/** A subscriber on the tenant's own broker, as the tenant's systems would have. */
async function subscribe(url: string, topic: string, into: Received[]): Promise<MqttClient> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  client.on('message', (t, payload) => {
    const e = JSON.parse(payload.toString()) as { id: string; subject: string; action: string; data: { id: string } };
    into.push({ topic: t, id: e.id, subject: `${e.subject}.${e.action}`, dataId: e.data.id });
  });
  await client.subscribeAsync(topic, { qos: 1 });
  return client;
}

const waitUntil = (what: string, condition: () => boolean) =>
  waitFor(
    what,
    async () => {
      if (!condition()) throw new Error('not yet');
    },
    40_000,
  );

describe("events forwarded to a tenant's own MQTT broker", function () {
  this.timeout(120_000);
  let broker: Mosquitto;
  let port: number;
  let platform: TestPlatform;
  const dir = join(testWorkDir(), `mosquitto-${process.pid}`);

  before(async () => {
    port = await freePort();
    broker = await startMosquitto({ port, dir, log: () => undefined });
    platform = await startTestPlatform();
  });
  after(async () => {
    await platform.stop();
    await broker.stop();
  });

  it("delivers in order, isolates a broken destination, and catches up after the broker's outage", async () => {
    const good = await platform.tenant();
    const broken = await platform.tenant();
    await setDestination(platform.database.db, { tenant_id: good.tenantId, kind: 'mqtt', url: broker.url, topic: `bank/${good.tenantId}/events` });
    await setDestination(platform.database.db, { tenant_id: broken.tenantId, kind: 'mqtt', url: 'mqtt://127.0.0.1:1', topic: 'nowhere' });
    const received: Received[] = [];
    let subscriber = await subscribe(broker.url, `bank/${good.tenantId}/events`, received);

    const api = await machineApi(platform, good);
    const brokenApi = await machineApi(platform, broken);
    const owner = (await api('POST', '/users/', {})).body.id;
    await brokenApi('POST', '/portfolios/', build.portfolio((await brokenApi('POST', '/users/', {})).body.id));
    const first = (await api('POST', '/portfolios/', build.portfolio(owner))).body.id;
    await waitUntil('the first event', () => received.some((r) => r.dataId === first));
    assert.equal(received.find((r) => r.dataId === first)!.subject, 'portfolios.creation');

    await subscriber.endAsync();
    await broker.stop();
    const during: string[] = [];
    for (let i = 0; i < 5; i++) during.push((await api('POST', '/portfolios/', build.portfolio(owner, { name: `during ${i}` }))).body.id);
    await new Promise((r) => setTimeout(r, 1500));
    broker = await startMosquitto({ port, dir, log: () => undefined });
    subscriber = await subscribe(broker.url, `bank/${good.tenantId}/events`, received);
    try {
      await waitUntil('the events of the outage', () => during.every((id) => received.some((r) => r.dataId === id)));
      const order = received.filter((r) => during.includes(r.dataId)).map((r) => r.dataId);
      assert.deepEqual([...new Set(order)], during, 'in the order of the changes');
      assert.ok(received.every((r) => r.topic === `bank/${good.tenantId}/events`));
      // docs/adr/0024-observability.md: deliveries and failed attempts counted per destination kind.
      const metrics = await (await fetch(`${platform.metricsUrls.management}/metrics`)).text();
      const counter = (name: string) => Number(new RegExp(`^${name}\\{[^}]*destination_kind="mqtt"[^}]*\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? 0);
      assert.ok(counter('events_delivered_total') >= 1 + during.length, 'every delivered event counted');
      assert.ok(counter('events_delivery_failures_total') >= 1, 'the broken destination and the outage counted as failures');
    } finally {
      await subscriber.endAsync();
    }
  });
});
