import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, portAnswers } from '../../scripts/lib/ports.ts';
import { dataClient, managementClient } from '../src/clients.ts';

type Credentials = { tenant_id: string; management_url: string; data_url: string; access_key_id: string; secret_access_key: string; api_key: string };

/** Runs `npm start`'s script with its own data folder and ports; resolves once it prints ready. */
function start(dataDir: string, ports: Record<string, number>): Promise<{ child: ChildProcess; output: () => string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PLATFORM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  for (const [name, port] of Object.entries(ports)) env[name] = String(port);
  delete env.DATABASE_URL;
  delete env.NATS_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not get ready:\n${output}`)), 120_000);
    child.stdout!.on('data', () => {
      if (output.includes('[start] ready')) {
        clearTimeout(timer);
        resolve({ child, output: () => output });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}):\n${output}`));
    });
  });
}

describe('npm start', function () {
  this.timeout(300_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-start-'));
  let ports: Record<string, number>;

  before(async () => {
    ports = { MANAGEMENT_PORT: await freePort(), DATA_PORT: await freePort(), PG_PORT: await freePort(), NATS_PORT: await freePort(), MQTT_PORT: await freePort() };
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  const stop = async (child: ChildProcess) => {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGINT');
    assert.equal(await exited, 0);
    for (const port of Object.values(ports)) assert.equal(await portAnswers(port), false, `port ${port} still open after Ctrl-C`);
  };

  it('serves both interfaces with the demo credentials, stops everything on Ctrl-C, and reuses its data', async () => {
    const first = await start(dataDir, ports);
    const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    assert.deepEqual(Object.keys(credentials).sort(), ['access_key_id', 'api_key', 'data_url', 'management_url', 'secret_access_key', 'tenant_id']);
    const login = await managementClient(credentials.management_url).POST('/auth/login/', {
      body: { access_key_id: credentials.access_key_id, secret_access_key: credentials.secret_access_key },
    });
    assert.equal(login.response.status, 200);
    assert.equal(login.data?.token_type, 'Bearer');
    const data = dataClient(credentials.data_url, credentials.tenant_id, credentials.api_key);
    const ready = await data.GET('/readyz');
    assert.equal(ready.response.status, 200);
    await stop(first.child);

    const second = await start(dataDir, ports);
    const again = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    assert.equal(again.access_key_id, credentials.access_key_id, 'a second start keeps the credentials');
    const relogin = await managementClient(again.management_url).POST('/auth/login/', {
      body: { access_key_id: again.access_key_id, secret_access_key: again.secret_access_key },
    });
    assert.equal(relogin.response.status, 200, 'and its database');
    await stop(second.child);
  });
});
