import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HAProxyListener } from '@platform/dev-stack/haproxy-config';
import { startHAProxy } from '@platform/dev-stack/haproxy';
import { freePort, portAnswers, waitFor } from '@platform/dev-stack/ports';

// Real HAProxy (Debian's package, installed when missing) in front of two plain HTTP servers whose
// /readyz the test turns on and off, as the services' replicas will be checked.

type Replica = { name: string; port: number; ready: boolean; server: Server };

async function replica(name: string): Promise<Replica> {
  const r: Replica = { name, port: await freePort(), ready: true, server: createServer() };
  r.server.on('request', (req, res) => {
    if (req.url === '/readyz') res.writeHead(r.ready ? 200 : 503).end();
    else res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  await new Promise<void>((resolve) => r.server.listen(r.port, '127.0.0.1', resolve));
  return r;
}

const answers = async (port: number, n: number) => {
  const names = new Set<string>();
  for (let i = 0; i < n; i++) names.add(await (await fetch(`http://127.0.0.1:${port}/who`)).text());
  return names;
};

describe('dev stack: HAProxy in front of HTTP replicas', function () {
  this.timeout(60_000);
  let dir: string;
  let replicas: Replica[];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'haproxy-'));
    replicas = [await replica('a'), await replica('b')];
  });
  afterEach(async () => {
    for (const r of replicas) await new Promise((resolve) => r.server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const listener = (port: number, servers: Replica[]): HAProxyListener => ({
    name: 'replicas',
    port,
    mode: 'http',
    check: { path: '/readyz' },
    servers: servers.map((r) => ({ name: r.name, host: '127.0.0.1', port: r.port })),
    interMs: 200,
  });

  it('sends requests only to replicas whose check passes, takes a new config on reload, and stops', async () => {
    const port = await freePort();
    const proxy = await startHAProxy({ dir, listeners: [listener(port, replicas)], log: () => undefined });
    try {
      await waitFor('both replicas in rotation', async () => {
        if ((await answers(port, 6)).size !== 2) throw new Error('not both yet');
      });
      replicas[0]!.ready = false;
      await waitFor('replica a out of rotation', async () => {
        const names = await answers(port, 6);
        if (names.has('a')) throw new Error('a still answers');
      });
      assert.deepEqual([...(await answers(port, 10))], ['b'], 'only the ready replica answers');

      replicas[0]!.ready = true;
      const second = await freePort();
      await proxy.reload([listener(port, [replicas[0]!]), { ...listener(second, [replicas[1]!]), name: 'second' }]);
      await waitFor('the reloaded config in force', async () => {
        const [first, other] = [await answers(port, 6), await answers(second, 6)];
        if (first.size !== 1 || !first.has('a') || other.size !== 1 || !other.has('b')) throw new Error('old config still answers');
      });
      await assert.rejects(
        proxy.reload([{ ...listener(port, replicas), check: { path: 'no slash' } }]),
        /HAProxy/,
        'a config that cannot be written is refused',
      );
      assert.deepEqual([...(await answers(second, 3))], ['b'], 'and the running one stays');
    } finally {
      await proxy.stop();
    }
    assert.equal(await portAnswers(port), false, 'haproxy stopped');
  });

  it("counts each server's requests and retries in the runtime API, and takes a server out of rotation there", async () => {
    const port = await freePort();
    // A third server that refuses every connection: each request HAProxy sends it is retried on another.
    const gone = await freePort();
    const servers = [...replicas, { name: 'gone', port: gone, ready: true, server: createServer() }];
    const proxy = await startHAProxy({
      dir,
      listeners: [{ ...listener(port, servers), interMs: 60_000, retry: { retries: 2, on: ['conn-failure'] } }],
      log: () => undefined,
    });
    try {
      assert.deepEqual([...(await answers(port, 9))].sort(), ['a', 'b'], 'the refusing server never answers; its requests went to another');
      const stats = await proxy.serverStats();
      const of = (server: string) => stats.find((s) => s.listener === 'replicas' && s.server === server)!;
      assert.equal(of('a').sessions + of('b').sessions, 9, 'every request answered by a or b');
      assert.ok(of('gone').redispatches > 0, `the refused connections went on to another server: ${JSON.stringify(of('gone'))}`);

      await proxy.setServerState('replicas', 'a', 'maint');
      assert.match((await proxy.serverStats()).find((s) => s.server === 'a')!.status, /MAINT/);
      assert.deepEqual([...(await answers(port, 6))], ['b'], 'a is out of rotation at once');
      await proxy.setServerState('replicas', 'a', 'ready');
      assert.ok((await answers(port, 8)).has('a'), 'and back');
      await assert.rejects(proxy.setServerState('replicas', 'nobody', 'maint'), /HAProxy refused to set replicas\/nobody maint/);
    } finally {
      await proxy.stop();
    }
  });

  it('refuses to start on a port that is taken, saying so, and leaves the port to its owner', async () => {
    const taken = replicas[0]!.port;
    await assert.rejects(
      startHAProxy({ dir, listeners: [listener(taken, [replicas[1]!])], log: () => undefined }),
      new RegExp(`port ${taken} of listener replicas is taken`),
    );
    assert.equal(await (await fetch(`http://127.0.0.1:${taken}/who`)).text(), 'a', 'the port still belongs to its owner');
  });
});
