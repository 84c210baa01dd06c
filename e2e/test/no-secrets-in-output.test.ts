import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { createTestDatabase, testNatsUrl, type TestDatabase } from '@platform/test-support/database';
import { testSigningKey } from '@platform/test-support/platform';

/** Each secret must appear in none of the texts; the message names which one leaked where. */
function assertNoSecrets(texts: Record<string, string>, secrets: Record<string, string>): void {
  for (const [secretName, secret] of Object.entries(secrets)) {
    assert.ok(secret.length >= 8, `${secretName} is too short to look for`);
    for (const [where, text] of Object.entries(texts)) assert.ok(!text.includes(secret), `${secretName} appears in ${where}`);
  }
}

describe('secrets stay out of CLI listings and logs', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  const brokerPassword = 'bus-Pa55word-never-shown';
  const amqpPassword = 'amqp-Pa55word-never-shown';

  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  const cli = async (...args: string[]) =>
    (await promisify(execFile)(process.execPath, ['--import', 'tsx', 'cli/src/main.ts', ...args], { env: { ...process.env, DATABASE_URL: database.url } }))
      .stdout;

  it('masks broker passwords in destination set and list, shows an access key secret only when it is created, and logs no secret while serving', async () => {
    await cli('tenant', 'create', 'leaks', '--name', 'Leaks');
    const created = JSON.parse(await cli('access-key', 'create', 'leaks')) as { access_key_id: string; secret_access_key: string };
    const apiKey = JSON.parse(await cli('api-key', 'create', 'leaks')) as { api_key: string };
    await cli('tenant', 'create', 'leaks-amqp', '--name', 'Leaks AMQP');
    const setMqtt = await cli('destination', 'set-mqtt', 'leaks', `mqtt://bus-user:${brokerPassword}@127.0.0.1:1`);
    const setAmqp = await cli('destination', 'set-amqp', 'leaks-amqp', `amqp://bus-user:${amqpPassword}@127.0.0.1:1/vhost`, '--exchange', 'events');
    const list = await cli('destination', 'list');
    const tenants = await cli('tenant', 'list');
    const listed = JSON.parse(list) as { tenant_id: string; url: string }[];
    assert.deepEqual(
      listed.map((d) => [d.tenant_id, d.url]),
      [
        ['leaks', 'mqtt://bus-user:***@127.0.0.1:1'],
        ['leaks-amqp', 'amqp://bus-user:***@127.0.0.1:1/vhost'],
      ],
    );
    // The stored URL keeps the password: only what is shown is masked.
    const stored = (await database.db('event_destinations').where({ tenant_id: 'leaks' }).first()) as { url: string };
    assert.equal(stored.url, `mqtt://bus-user:${brokerPassword}@127.0.0.1:1`);

    const signingKey = await testSigningKey();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'management-service/src/main.ts'], {
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        METRICS_PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        NATS_URL: testNatsUrl(),
        JWT_PRIVATE_KEY: signingKey,
        LOG_LEVEL: 'debug',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    child.stdout.on('data', (c: Buffer) => (logs += c.toString()));
    child.stderr.on('data', (c: Buffer) => (logs += c.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let tokens: { access_token: string; refresh_token: string };
    try {
      await waitFor('readyz', async () => {
        if (!(await fetch(`${url}/readyz`)).ok) throw new Error('not ready');
      });
      const json = { 'content-type': 'application/json' };
      const login = await fetch(`${url}/auth/login/`, { method: 'POST', headers: json, body: JSON.stringify(created) });
      assert.equal(login.status, 200);
      const first = (await login.json()) as { access_token: string; refresh_token: string };
      const refreshed = await fetch(`${url}/auth/refresh-token/`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ refresh_token: first.refresh_token }),
      });
      assert.equal(refreshed.status, 200);
      tokens = (await refreshed.json()) as { access_token: string; refresh_token: string };
      const user = await fetch(`${url}/users/`, {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${tokens.access_token}` },
        body: JSON.stringify({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' }),
      });
      assert.equal(user.status, 201);
      // A wrong secret and a spent refresh token (which ends the chain) are refused: their problems are logged too.
      assert.equal(
        (await fetch(`${url}/auth/refresh-token/`, { method: 'POST', headers: json, body: JSON.stringify({ refresh_token: first.refresh_token }) })).status,
        401,
      );
      const wrong = await fetch(`${url}/auth/login/`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ ...created, secret_access_key: `${created.secret_access_key}x` }),
      });
      assert.equal(wrong.status, 401);
      assert.match(logs, /"operation":"login"/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }

    assert.match(setMqtt, /bus-user:\*\*\*@/);
    assertNoSecrets(
      { 'destination set-mqtt': setMqtt, 'destination set-amqp': setAmqp, 'destination list': list, 'tenant list': tenants, 'service logs': logs },
      {
        'the MQTT broker password': brokerPassword,
        'the AMQP broker password': amqpPassword,
        'the access key secret': created.secret_access_key,
        'the API key': apiKey.api_key,
        'the database password': decodeURIComponent(new URL(database.url).password),
        'the access token': tokens.access_token,
        'the refresh token': tokens.refresh_token,
        'the signing key': signingKey.split('\n')[1]!,
      },
    );
  });
});
