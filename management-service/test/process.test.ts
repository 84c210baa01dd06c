import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, waitFor } from '../../scripts/lib/ports.ts';
import { createTestDatabase, testNatsUrl, type TestDatabase } from '../../scripts/test-support/database.ts';
import { testSigningKey } from '../../scripts/test-support/platform.ts';
import { createAccessKey, createTenant } from '../src/admin/provisioning.ts';

function run(env: NodeJS.ProcessEnv): { child: ChildProcess; exit: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'management-service/src/main.ts'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return { child, exit: new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr }))) };
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

  it('finishes a request in flight on SIGTERM, then exits 0', async () => {
    await createTenant(database.db, { id: 'shutdown' });
    const key = await createAccessKey(database.db, 'shutdown');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const { child, exit } = run({
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      NATS_URL: testNatsUrl(),
      JWT_PRIVATE_KEY: await testSigningKey(),
      LOG_LEVEL: 'error',
    });
    await waitFor('readyz', async () => {
      if (!(await fetch(`${url}/readyz`)).ok) throw new Error('not ready');
    });
    // A login spends tens of milliseconds on the slow hash: long enough to be in flight.
    const inFlight = fetch(`${url}/auth/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(key) });
    await new Promise((r) => setTimeout(r, 15));
    child.kill('SIGTERM');
    const res = await inFlight;
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { token_type: string }).token_type, 'Bearer');
    const { code } = await exit;
    assert.equal(code, 0);
    await assert.rejects(fetch(`${url}/livez`), 'no longer accepts connections');
  });
});
