import assert from 'node:assert/strict';
import { postgresPrimaryListener, renderHAProxyConfig, serviceReplicasListener, type HAProxyListener } from '@platform/dev-stack/haproxy-config';

const replicas = (over: Partial<HAProxyListener> = {}): HAProxyListener => ({
  name: 'management',
  port: 18_080,
  mode: 'http',
  check: { path: '/readyz' },
  servers: [
    { name: 'm1', host: '127.0.0.1', port: 18_081 },
    { name: 'm2', host: '127.0.0.1', port: 18_082 },
  ],
  ...over,
});

const section = (config: string, name: string) => {
  const start = config.indexOf(`listen ${name}\n`);
  assert.notEqual(start, -1, `listen ${name} is in the config`);
  const end = config.indexOf('\nlisten ', start + 1);
  return config
    .slice(start, end === -1 ? undefined : end)
    .trimEnd()
    .split('\n');
};

describe('dev stack: HAProxy config', () => {
  it('sends Postgres connections only to the node whose Patroni answers /primary, and cuts them when it stops', () => {
    const listener = postgresPrimaryListener({
      port: 15_432,
      nodes: [
        { name: 'pg0', host: '127.0.0.1', port: 15_433, restPort: 18_008 },
        { name: 'pg1', host: '127.0.0.1', port: 15_434, restPort: 18_009 },
      ],
    });
    const lines = section(renderHAProxyConfig([listener]), 'postgres');
    assert.deepEqual(lines, [
      'listen postgres',
      '  bind 127.0.0.1:15432',
      '  mode tcp',
      '  option httpchk GET /primary',
      '  http-check expect status 200',
      '  default-server inter 1000ms fall 2 rise 1 on-marked-down shutdown-sessions',
      '  server pg0 127.0.0.1:15433 check port 18008',
      '  server pg1 127.0.0.1:15434 check port 18009',
    ]);
  });

  it('checks HTTP replicas on their own port with the path and status given, each listener in its section', () => {
    const config = renderHAProxyConfig([
      replicas(),
      replicas({ name: 'data', port: 18_090, check: { path: '/readyz', expectStatus: 204 }, servers: [{ name: 'd1', host: 'localhost', port: 18_091 }] }),
    ]);
    const management = section(config, 'management');
    assert.ok(management.includes('  mode http'));
    assert.ok(management.includes('  server m2 127.0.0.1:18082 check'));
    assert.ok(management.includes('  http-check expect status 200'), 'status 200 unless told');
    const data = section(config, 'data');
    assert.ok(data.includes('  http-check expect status 204'));
    assert.ok(data.includes('  server d1 localhost:18091 check'));
    assert.ok(!data.some((l) => l.includes('m1')), 'no server of another listener');
  });

  it('writes the timeouts given and keeps sessions open on a down server when asked to', () => {
    const config = renderHAProxyConfig([replicas({ shutdownSessionsOnDown: false, interMs: 500, fall: 3, rise: 2 })], {
      connectMs: 1_500,
      clientMs: 60_000,
      serverMs: 61_000,
      checkMs: 700,
    });
    for (const line of ['timeout connect 1500ms', 'timeout client 60000ms', 'timeout server 61000ms', 'timeout check 700ms'])
      assert.ok(config.includes(line), line);
    assert.ok(config.includes('  default-server inter 500ms fall 3 rise 2\n'));
  });

  it('refuses words that would add directives of their own, and listeners that collide', () => {
    const refused: [string, () => string][] = [
      ['name with a newline', () => renderHAProxyConfig([replicas({ name: 'x\n  bind 0.0.0.0:80' })])],
      ['path with a space', () => renderHAProxyConfig([replicas({ check: { path: '/readyz HTTP/1.1\r\nHost: x' } })])],
      ['server host with a space', () => renderHAProxyConfig([replicas({ servers: [{ name: 'a', host: '127.0.0.1 backup', port: 1 }] })])],
      ['port out of range', () => renderHAProxyConfig([replicas({ port: 70_000 })])],
      ['no servers', () => renderHAProxyConfig([replicas({ servers: [] })])],
      [
        'a server named twice',
        () =>
          renderHAProxyConfig([
            replicas({
              servers: [
                { name: 'a', host: 'h', port: 1 },
                { name: 'a', host: 'h', port: 2 },
              ],
            }),
          ]),
      ],
      ['two listeners on one port', () => renderHAProxyConfig([replicas(), replicas({ name: 'other' })])],
      ['two listeners of one name', () => renderHAProxyConfig([replicas(), replicas({ port: 1 })])],
      ['a status that is none', () => renderHAProxyConfig([replicas({ check: { path: '/', expectStatus: 42 } })])],
      ['retries of TCP connections', () => renderHAProxyConfig([replicas({ mode: 'tcp', retry: { retries: 2, on: ['conn-failure'] } })])],
      ['no retries', () => renderHAProxyConfig([replicas({ retry: { retries: 0, on: ['conn-failure'] } })])],
      [
        'a failure kind HAProxy would read as a directive',
        () => renderHAProxyConfig([replicas({ retry: { retries: 2, on: ['all-retryable-errors\n  bind :80' as 'conn-failure'] } })]),
      ],
    ];
    for (const [what, render] of refused) assert.throws(render, /HAProxy/, what);
  });

  it("retries a service's failed requests on the other replica only when they may be sent twice", () => {
    const listener = serviceReplicasListener({
      name: 'management',
      port: 18_080,
      replicas: [
        { name: 'management-0', port: 18_081 },
        { name: 'management-1', port: 18_082 },
      ],
    });
    const lines = section(renderHAProxyConfig([listener]), 'management');
    assert.ok(lines.includes('  mode http'));
    assert.ok(lines.includes('  option httpchk GET /readyz'));
    assert.ok(lines.includes('  default-server inter 1000ms fall 2 rise 1 on-marked-down shutdown-sessions'));
    assert.ok(lines.includes('  option redispatch'));
    assert.ok(lines.includes('  retries 2'));
    assert.ok(lines.includes('  retry-on conn-failure empty-response response-timeout'));
    const disable = lines.findIndex((l) => l.startsWith('  http-request disable-l7-retry'));
    assert.equal(lines[disable], '  http-request disable-l7-retry unless idempotent_method || idempotency_key');
    assert.ok(lines.includes('  acl idempotent_method method GET HEAD OPTIONS PUT DELETE'));
    assert.ok(lines.includes('  acl idempotency_key req.hdr(idempotency-key) -m found'));
    assert.deepEqual(
      lines.filter((l) => l.startsWith('  server ')),
      ['  server management-0 127.0.0.1:18081 check', '  server management-1 127.0.0.1:18082 check'],
    );
    // Postgres's listener keeps no request to send again.
    const postgres = renderHAProxyConfig([postgresPrimaryListener({ port: 5_000, nodes: [{ name: 'pg0', host: '127.0.0.1', port: 5_432, restPort: 8_008 }] })]);
    assert.ok(!postgres.includes('retry-on'));
  });
});
