import assert from 'node:assert/strict';
import { subscriberCredentials } from '../lib/subscriber-credentials.ts';

const FILE = '/data/credentials.json';
/** What npm start writes, with fields replaced or (undefined) left out as given. */
const written = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    tenant_id: 'demo',
    management_url: 'http://127.0.0.1:8080',
    bus_username: 'B01JP9ZMQCN0XG3YNRRKJ6T0FZ3',
    bus_password: 'secret-of-the-credential',
    nats_url: 'nats://127.0.0.1:4222',
    mqtt_url: 'mqtt://127.0.0.1:1883',
    ...fields,
  });

describe("a subscriber's credentials from npm start's file", () => {
  it('reads the tenant, its bus login and both URLs', () => {
    assert.deepEqual(subscriberCredentials(written(), FILE), {
      tenantId: 'demo',
      username: 'B01JP9ZMQCN0XG3YNRRKJ6T0FZ3',
      password: 'secret-of-the-credential',
      natsUrl: 'nats://127.0.0.1:4222',
      mqttUrl: 'mqtt://127.0.0.1:1883',
    });
  });

  it('leaves a URL the file does not have to the caller, which knows which one it needs', () => {
    const credentials = subscriberCredentials(written({ nats_url: undefined, mqtt_url: undefined }), FILE);
    assert.equal(credentials.natsUrl, undefined);
    assert.equal(credentials.mqttUrl, undefined);
  });

  it("drops a login the URLs carry (topology.json's admin) and takes the first of topology.json's MQTT listeners", () => {
    const credentials = subscriberCredentials(
      written({
        nats_url: 'nats://admin:s3cret@127.0.0.1:4222,127.0.0.1:4223',
        mqtt_url: undefined,
        mqtt_urls: ['mqtt://127.0.0.1:1883', 'mqtt://127.0.0.1:1884'],
      }),
      FILE,
    );
    assert.equal(credentials.natsUrl, 'nats://127.0.0.1:4222,127.0.0.1:4223');
    assert.equal(credentials.mqttUrl, 'mqtt://127.0.0.1:1883');
    assert.equal(subscriberCredentials(written({ mqtt_url: 'mqtt://u:p@127.0.0.1:1883' }), FILE).mqttUrl, 'mqtt://127.0.0.1:1883');
  });

  it('refuses a file without the tenant or its bus login, naming the file, the field and what to do', () => {
    for (const name of ['tenant_id', 'bus_username', 'bus_password']) {
      for (const value of [undefined, '', 42]) {
        assert.throws(
          () => subscriberCredentials(written({ [name]: value }), FILE),
          (error: Error) => error.message.startsWith(`${FILE} has no ${name}: `) && error.message.includes('run npm start'),
          `${name}: ${String(value)}`,
        );
      }
    }
  });

  it('refuses a file that is not a JSON object', () => {
    for (const text of ['{', '[]', 'null'])
      assert.throws(() => subscriberCredentials(text, FILE), new RegExp(`^Error: ${FILE} is not (JSON|a JSON object)`), text);
  });
});
