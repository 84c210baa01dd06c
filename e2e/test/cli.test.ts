import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { dataClient, managementClient } from '../src/clients.ts';

describe('platform team CLI', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  const cli = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'cli/src/main.ts', ...args], {
      env: { ...process.env, DATABASE_URL: platform.database.url },
    });
    return stdout.trim() ? JSON.parse(stdout) : undefined;
  };

  before(async () => {
    platform = await startTestPlatform();
  });
  after(() => platform.stop());

  it('creates a tenant, an access key and an API key that work against both interfaces', async () => {
    const tenant = await cli('tenant', 'create', 'acme-bank', '--name', 'ACME Bank', '--broker-integration', 'SERVICE');
    assert.equal(tenant.id, 'acme-bank');
    assert.equal(tenant.broker_integration, 'SERVICE');
    const key = await cli('access-key', 'create', 'acme-bank');
    assert.match(key.access_key_id, /^A[0-9A-HJKMNP-TV-Z]{26}$/);
    const api = await cli('api-key', 'create', 'acme-bank');
    assert.match(api.api_key, /^dk_/);

    const login = await managementClient(platform.managementUrl).POST('/auth/login/', { body: key });
    assert.equal(login.response.status, 200);
    const stored = await platform.database.db('access_keys').where({ id: key.access_key_id }).first();
    assert.ok(!JSON.stringify(stored).includes(key.secret_access_key), 'the secret is not stored');
    assert.match(stored.secret_hash, /^scrypt\$/);

    const data = dataClient(platform.dataUrl, 'acme-bank', api.api_key);
    const res = await data.POST('/data/reference/query/', { body: { instrument_ids: ['US0378331005'], fields: ['NAME'], fields_extra: [] } });
    assert.equal(res.response.status, 200, 'the new API key is accepted');
    assert.deepEqual(res.data, { data: {}, meta: null }, 'an ISIN outside the reference data is absent');
  });

  it("configures and removes a tenant's event destination", async () => {
    await cli('tenant', 'create', 'dest-bank');
    const mqtt = await cli('destination', 'set-mqtt', 'dest-bank', 'mqtt://broker.example:1883');
    assert.deepEqual([mqtt.kind, mqtt.topic], ['mqtt', 'tenants/dest-bank/events']);
    const amqp = await cli('destination', 'set-amqp', 'dest-bank', 'amqps://u:p@broker.example/vh', '--exchange', 'events');
    assert.deepEqual([amqp.kind, amqp.exchange, amqp.routing_key, amqp.topic], ['amqp', 'events', 'tenants.dest-bank.events', null]);
    assert.equal((await cli('destination', 'list')).length, 1);
    await assert.rejects(
      cli('destination', 'set-mqtt', 'dest-bank', 'http://nope'),
      (e: { code: number; stderr: string }) => e.code === 1 && /mqtt:\/\//.test(e.stderr),
    );
    assert.deepEqual(await cli('destination', 'remove', 'dest-bank'), { removed: true });
  });

  it('refuses a bad tenant id and a duplicate tenant with a message and exit code 1', async () => {
    await assert.rejects(cli('tenant', 'create', 'Not Valid'), (e: { code: number; stderr: string }) => e.code === 1 && /tenant id/.test(e.stderr));
    await cli('tenant', 'create', 'twice');
    await assert.rejects(cli('tenant', 'create', 'twice'), (e: { code: number; stderr: string }) => e.code === 1 && /Already exists/.test(e.stderr));
  });
});
