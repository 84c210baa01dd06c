import assert from 'node:assert/strict';
import { redactDestination, redactUrl } from '../src/admin/redact.ts';

describe('redacting broker URLs', () => {
  it('replaces the password and keeps the user, host, path and other fields', () => {
    assert.equal(redactUrl('mqtts://user:s3cret@broker.example.com:8883'), 'mqtts://user:***@broker.example.com:8883');
    assert.equal(redactUrl('amqp://u:p%40ss@host/vhost'), 'amqp://u:***@host/vhost');
    assert.deepEqual(redactDestination({ tenant_id: 't', url: 'mqtt://a:b@h:1', topic: 'x' }), { tenant_id: 't', url: 'mqtt://a:***@h:1', topic: 'x' });
  });

  it('leaves a URL without a password as it is, and withholds text that is no URL but carries one', () => {
    assert.equal(redactUrl('mqtt://broker:1883'), 'mqtt://broker:1883');
    assert.equal(redactUrl('mqtt://user@broker:1883'), 'mqtt://user@broker:1883');
    assert.equal(redactUrl('not a url //user:pw@x'), '***');
  });
});
