import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { createTestDatabase, testNatsUrl, type TestDatabase } from '@platform/test-support/database';
import { testSigningKey } from '@platform/test-support/platform';
import { createAccessKey, createTenant } from '../src/admin/provisioning.ts';

type Exit = { code: number | null; stdout: string; stderr: string };

function run(env: NodeJS.ProcessEnv, args: string[] = []): { child: ChildProcess; exit: Promise<Exit> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'management-service/src/main.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return { child, exit: new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr }))) };
}

describe('management service process', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  it('stops at start with a message naming every missing or bad setting', async () => {
    const { exit } = run({ PATH: process.env.PATH, PORT: 'http' });
    const { code, stderr } = await exit;
    assert.equal(code, 1);
    assert.match(stderr, /DATABASE_URL is required/);
    assert.match(stderr, /NATS_URL is required/);
    assert.match(stderr, /JWT_PRIVATE_KEY is required: .*npm run cli -- signing-key/);
    assert.match(stderr, /PORT: "http" is not a whole number/);
  });

  it('answers --version with its version, revision and Node.js, and exits 0 without any setting', async () => {
    const { code, stdout, stderr } = await run({ PATH: process.env.PATH, PLATFORM_REVISION: 'f00dcafe', PORT: 'http' }, ['--version']).exit;
    assert.equal(stderr, '');
    assert.equal(code, 0);
    assert.deepEqual(JSON.parse(stdout), { version: '0.1.0', revision: 'f00dcafe', node: process.versions.node });
  });

  it('logs JSON lines with request id, operation, status and tenant; finishes a request in flight on SIGTERM, then exits 0', async () => {
    await createTenant(database.db, { id: 'shutdown' });
    const key = await createAccessKey(database.db, 'shutdown');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const { child, exit } = run({
      PATH: process.env.PATH,
      PORT: String(port),
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      NATS_URL: testNatsUrl(),
      JWT_PRIVATE_KEY: await testSigningKey(),
      LOG_LEVEL: 'info',
      PLATFORM_VERSION: '7.1.2',
      PLATFORM_REVISION: 'abc1234',
    });
    await waitFor('readyz', async () => {
      if (!(await fetch(`${url}/readyz`)).ok) throw new Error('not ready');
    });
    // The build as the image records it (docs/adr/0047-container-image.md).
    assert.deepEqual(await (await fetch(`${url}/livez`)).json(), { status: 'ok', version: '7.1.2', revision: 'abc1234', node: process.versions.node });
    const login = await fetch(`${url}/auth/login/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'login-1' },
      body: JSON.stringify(key),
    });
    const { access_token } = (await login.json()) as { access_token: string };
    await fetch(`${url}/users/`, { headers: { authorization: `Bearer ${access_token}`, 'x-request-id': 'list-1' } });
    // A login spends tens of milliseconds on the slow hash: long enough to be in flight.
    const inFlight = fetch(`${url}/auth/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(key) });
    await new Promise((r) => setTimeout(r, 15));
    child.kill('SIGTERM');
    const res = await inFlight;
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { token_type: string }).token_type, 'Bearer');
    const { code, stdout } = await exit;
    assert.equal(code, 0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const list = lines.find((l) => l.request_id === 'list-1' && l.message === 'request');
    assert.deepEqual(
      { operation: list?.operation, status: list?.status, tenant: list?.tenant, service: list?.service },
      { operation: 'listUsers', status: 200, tenant: 'shutdown', service: 'management-service' },
    );
    assert.ok(lines.some((l) => l.request_id === 'login-1' && l.status === 200 && l.operation === 'login'));
    assert.ok(lines.some((l) => l.message === 'management service stopped'));
    await assert.rejects(fetch(`${url}/livez`), 'no longer accepts connections');
  });
});
