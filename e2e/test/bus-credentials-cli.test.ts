import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectNats, newUlid } from '@platform/shared';
import { testWorkDir } from '@platform/test-support/database';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

// The renderer as Kubernetes runs it (`bus-credentials sync` next to nats-server, which it reloads
// by the pid file; docs/adr/0026-bus-authorization.md), and the CLI commands of bus credentials.
describe('bus credentials through the CLI, and the renderer that reloads nats-server', function () {
  this.timeout(90_000);
  let platform: TestPlatform;
  let sync: ChildProcess | undefined;
  let syncLog = '';
  const env = () => ({ ...process.env, DATABASE_URL: platform.database.url });
  const cli = async (args: string[], input?: string) => {
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', 'cli/src/main.ts', ...args], { env: env() });
    if (input !== undefined) {
      run.child.stdin!.end(input);
    }
    const { stdout } = await run;
    return stdout.trim();
  };
  // A login that meets the server while it reloads may get no answer at all: give up after a second
  // (it did not work) rather than after the client's default 20 s.
  const natsLogin = (user: string, pass: string) =>
    connectNats(`nats://${new URL(platform.natsUrl).host}`, 'cli-test', { user, pass, reconnect: false, timeoutMs: 1000 }).then(
      (nc) => nc.close().then(() => true),
      () => false,
    );
  const until = async (what: string, check: () => Promise<boolean>, ms: number) => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; renderer said: ${syncLog}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  before(async () => {
    platform = await startTestPlatform({}, { ownNats: true });
  });
  after(async () => {
    sync?.kill('SIGTERM');
    await platform?.stop();
  });

  it('creates a credential shown once, renders it, stops it within the interval when revoked, and lists without secrets', async () => {
    const tenant = await platform.tenant();
    const created = JSON.parse(await cli(['bus-credentials', 'create', tenant.tenantId, '--description', 'consumer'])) as Record<string, string>;
    assert.deepEqual(Object.keys(created).sort(), ['id', 'password', 'tenant_id', 'username']);
    assert.equal(created.username, created.id);
    assert.equal(await natsLogin(created.username!, created.password!), false, 'unknown to the server before a render');
    await assert.rejects(
      cli(['bus-credentials', 'create', 'no-such-tenant']),
      (e: { code: number; stderr: string }) => e.code === 1 && /No enabled tenant/.test(e.stderr),
    );

    const server = platform.natsServer!;
    const pidFile = join(testWorkDir(), `nats-${newUlid()}.pid`);
    writeFileSync(pidFile, String(server.process.pid));
    const hashFile = join(testWorkDir(), `data-hash-${newUlid()}`);
    writeFileSync(hashFile, server.users.source.services.data);
    sync = spawn(
      process.execPath,
      ['--import', 'tsx', 'cli/src/main.ts', 'bus-credentials', 'sync', '--users-file', server.users.file, '--pid-file', pidFile, '--interval-ms', '200'],
      {
        env: { ...env(), NATS_MANAGEMENT_PASSWORD_HASH: server.users.source.services.management, NATS_DATA_PASSWORD_HASH_FILE: hashFile },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    sync.stderr!.on('data', (chunk: Buffer) => (syncLog += chunk.toString()));
    await until('the credential to work', () => natsLogin(created.username!, created.password!), 20_000);

    assert.deepEqual(JSON.parse(await cli(['bus-credentials', 'revoke', created.id!])), { revoked: true });
    const revokedAt = Date.now(); // committed when the CLI returns
    await until('the credential to be refused', async () => !(await natsLogin(created.username!, created.password!)), 5000);
    const took = Date.now() - revokedAt;
    assert.ok(took < 3000, `refused ${took} ms after the revocation (interval 200 ms); renderer said: ${syncLog}`);
    assert.deepEqual(JSON.parse(await cli(['bus-credentials', 'revoke', created.id!])), { revoked: false }, 'once');

    const listed = await cli(['bus-credentials', 'list', tenant.tenantId]);
    const rows = JSON.parse(listed) as { id: string; revoked_at: string | null; description: string }[];
    assert.deepEqual(
      rows.map((r) => [r.id, r.description, r.revoked_at !== null]),
      [[created.id, 'consumer', true]],
    );
    assert.ok(!listed.includes(created.password!) && !listed.includes('$2'), 'neither the password nor its hash');

    const exited = new Promise((r) => sync!.once('exit', (code) => r(code)));
    sync.kill('SIGTERM');
    assert.equal(await exited, 0, 'the renderer stops on SIGTERM');
    sync = undefined;
  });

  it('hashes a service password read from standard input', async () => {
    const hash = await cli(['bus-credentials', 'hash-password'], 'a-service-password\n');
    assert.match(hash, /^\$2[aby]\$10\$[./A-Za-z0-9]{53}$/);
    const bcrypt = (await import('bcryptjs')).default;
    assert.equal(await bcrypt.compare('a-service-password', hash), true);
  });
});
