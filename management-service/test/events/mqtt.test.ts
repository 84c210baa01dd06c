import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { build, machineApi } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

describe('tenant events over MQTT (the NATS server MQTT listener)', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  before(async function () {
    if (!process.env.TEST_MQTT_URL) this.skip();
    platform = await startTestPlatform();
  });
  after(() => platform?.stop());

  it("delivers a tenant's events on tenants/<tenant>/events and no other tenant's", async () => {
    const tenant = await platform.tenant();
    const other = await platform.tenant();
    const client = await mqtt.connectAsync(process.env.TEST_MQTT_URL!, { clientId: `test-${tenant.tenantId}`, protocolVersion: 4 });
    const received: { topic: string; body: { subject: string; action: string; data: { id: string } } }[] = [];
    client.on('message', (topic, payload) => received.push({ topic, body: JSON.parse(payload.toString()) }));
    try {
      await client.subscribeAsync(`tenants/${tenant.tenantId}/events`, { qos: 1 });
      const api = await machineApi(platform, tenant);
      const owner = (await api('POST', '/users/', {})).body.id;
      const p = (await api('POST', '/portfolios/', build.portfolio(owner))).body;
      const otherApi = await machineApi(platform, other);
      await otherApi('POST', '/portfolios/', build.portfolio((await otherApi('POST', '/users/', {})).body.id));
      for (let i = 0; i < 100 && !received.some((m) => m.body.data.id === p.id); i++) await new Promise((r) => setTimeout(r, 100));
      const event = received.find((m) => m.body.data.id === p.id);
      assert.ok(event, 'the creation event arrived over MQTT');
      assert.equal(event.topic, `tenants/${tenant.tenantId}/events`);
      assert.equal(`${event.body.subject}.${event.body.action}`, 'portfolios.creation');
      assert.ok(
        received.every((m) => m.topic === `tenants/${tenant.tenantId}/events`),
        'nothing of the other tenant',
      );
    } finally {
      await client.endAsync();
    }
  });
});
