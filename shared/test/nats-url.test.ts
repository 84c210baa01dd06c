import assert from 'node:assert/strict';
import { parsers } from '../src/config.ts';
import { natsCredentials } from '../src/nats.ts';

// NATS_URL names one server or a cluster's servers (docs/adr/0051-replicated-streams.md).

describe('NATS URL: one server or a cluster', () => {
  it('takes the credentials of the first server and gives every server without them', () => {
    assert.deepEqual(natsCredentials('nats://svc:p%40ss@127.0.0.1:4222'), { servers: ['nats://127.0.0.1:4222'], user: 'svc', pass: 'p@ss' });
    assert.deepEqual(natsCredentials('nats://svc:pw@10.0.0.1:4222, 10.0.0.2:4223,tls://10.0.0.3:4224'), {
      servers: ['nats://10.0.0.1:4222', 'nats://10.0.0.2:4223', 'tls://10.0.0.3:4224'],
      user: 'svc',
      pass: 'pw',
    });
    assert.deepEqual(natsCredentials('nats://10.0.0.1:4222,10.0.0.2:4222'), { servers: ['nats://10.0.0.1:4222', 'nats://10.0.0.2:4222'] });
  });

  it('accepts a server or a list of servers as NATS_URL', () => {
    for (const raw of ['nats://127.0.0.1:4222', 'nats://u:p@127.0.0.1:4222,127.0.0.1:4223,127.0.0.1:4224', 'tls://a:4222,tls://b:4222']) {
      assert.equal(parsers.natsServers(raw), raw);
    }
  });

  it('refuses a list with a bad server by its position, without the credentials', () => {
    const cases: [string, RegExp][] = [
      ['http://u:secret@127.0.0.1:4222', /^expected a nats or tls URL, e\.g\./],
      ['nats://u:secret@127.0.0.1:4222,127.0.0.1:port', /^server 2 of 2: .* is not a URL, e\.g\./],
      ['nats://u:secret@127.0.0.1:4222,,127.0.0.1:4224', /^server 2 of 3: nothing between two commas/],
      ['nats://u:secret@', /is not a URL/],
      ['nats://u:secret@127.0.0.1:4222,nats://', /^server 2 of 2: "nats:\/\/" names no host/],
      ['nats://u:secret@127.0.0.1:4222,http://127.0.0.1:4223', /^server 2 of 2: expected a nats or tls URL/],
    ];
    for (const [raw, message] of cases) {
      assert.throws(
        () => parsers.natsServers(raw),
        (error: unknown) => {
          assert.match((error as Error).message, message);
          assert.doesNotMatch((error as Error).message, /secret/);
          return true;
        },
        raw,
      );
    }
  });
});
