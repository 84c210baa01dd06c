import assert from 'node:assert/strict';
import { build } from '@platform/test-support/fixtures';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { exitOf } from '@platform/dev-stack/processes';
import { processesOf } from '@platform/dev-stack/process-list';
import { startSupervisor, type RunningSupervisor } from '@platform/dev-stack/supervisor';
import { machineClient } from '../src/clients.ts';

type Credentials = {
  tenant_id: string;
  management_url: string;
  access_key_id: string;
  secret_access_key: string;
  bus_username: string;
  bus_password: string;
  nats_url: string;
  mqtt_url: string;
};
type Subscriber = { child: ChildProcess; stdout: () => string; stderr: () => string };
type Line = { subject: string; action: string; entity_id: string; created: string; id: string };

/** A subscriber run from the repository root as the docs say, its output kept. */
function run(command: string, args: string[]): Subscriber {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return { child, stdout: () => stdout, stderr: () => stderr };
}
const tail = (file: string, ...options: string[]) => run(process.execPath, ['--import', 'tsx', 'scripts/events-tail.ts', '--credentials', file, ...options]);

/** Resolves once the subscriber says it is subscribed, failing with its output if it ends or stays silent. */
async function subscribed(subscriber: Subscriber, said: RegExp): Promise<void> {
  await waitFor(
    'the subscription',
    async () => {
      if (subscriber.child.exitCode !== null) throw new Error(`exited ${subscriber.child.exitCode}: ${subscriber.stderr()}`);
      if (!said.test(subscriber.stderr())) throw new Error(`not yet: ${subscriber.stderr()}`);
    },
    30_000,
  );
}

/** The JSON lines of a subscriber's stdout. */
const lines = (subscriber: Subscriber) =>
  subscriber
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('npm run events:tail and docs/examples/subscribe-events.mjs on npm start', function () {
  this.timeout(300_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-events-tail-'));
  const file = join(dataDir, 'credentials.json');
  const ports: Record<string, number> = {};
  let supervisor: RunningSupervisor;
  let credentials: Credentials;
  const subscribers: Subscriber[] = [];

  before(async () => {
    for (const name of ['MANAGEMENT_PORT', 'DATA_PORT', 'MANAGEMENT_METRICS_PORT', 'DATA_METRICS_PORT', 'PG_PORT', 'NATS_PORT', 'MQTT_PORT'])
      ports[name] = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PLATFORM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    for (const [name, port] of Object.entries(ports)) env[name] = String(port);
    delete env.DATABASE_URL;
    delete env.NATS_URL;
    supervisor = await startSupervisor(env);
    credentials = JSON.parse(readFileSync(file, 'utf8')) as Credentials;
  });
  after(async () => {
    for (const s of subscribers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    if (supervisor) {
      const exited = exitOf(supervisor.child);
      supervisor.child.kill('SIGINT');
      await exited;
    }
    for (const left of processesOf(dataDir)) process.kill(left.pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("writes the bus's URLs of this start, without a login in them, beside the demo tenant's bus credential", () => {
    assert.equal(credentials.nats_url, `nats://127.0.0.1:${ports.NATS_PORT}`);
    assert.equal(credentials.mqtt_url, `mqtt://127.0.0.1:${ports.MQTT_PORT}`);
    assert.ok(credentials.bus_username && credentials.bus_password);
  });

  it("prints the tenant's events as they arrive, over NATS and MQTT, and the example prints them too; each stops with 0 on SIGTERM or SIGINT", async () => {
    const overNats = run('npm', ['run', '-s', 'events:tail', '--', '--credentials', file]);
    const overMqtt = tail(file, '--mqtt');
    const example = run(process.execPath, ['docs/examples/subscribe-events.mjs', file]);
    subscribers.push(overNats, overMqtt, example);
    await subscribed(overNats, new RegExp(`listening on NATS subject tenants\\.${credentials.tenant_id}\\.events at ${credentials.nats_url}`));
    await subscribed(overMqtt, new RegExp(`listening on MQTT topic tenants/${credentials.tenant_id}/events at ${credentials.mqtt_url}`));
    await subscribed(example, new RegExp(`subscribed to tenants/${credentials.tenant_id}/events`));
    for (const s of [overNats, overMqtt, example]) assert.equal(s.stdout(), '', 'no event before one is made');

    const machine = machineClient(credentials.management_url, { accessKeyId: credentials.access_key_id, secret: credentials.secret_access_key });
    const user = await machine.POST('/users/', { body: { first_name: 'Ada', last_name: 'Lovelace' } });
    assert.equal(user.response.status, 201);
    const portfolio = await machine.POST('/portfolios/', { body: build.portfolio(user.data!.id) as never });
    assert.equal(portfolio.response.status, 201);
    const portfolioId = portfolio.data!.id;

    const creation = (s: Subscriber) => lines(s).find((line) => line.entity_id === portfolioId && line.action === 'creation') as Line | undefined;
    for (const s of [overNats, overMqtt]) {
      await waitFor('the creation event', async () => assert.ok(creation(s), s.stdout() + s.stderr()), 30_000);
      const line = creation(s)!;
      assert.deepEqual(Object.keys(line), ['subject', 'action', 'entity_id', 'created', 'id']);
      assert.equal(line.subject, 'portfolios');
      assert.match(line.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.match(line.id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
    }
    assert.equal(creation(overNats)!.id, creation(overMqtt)!.id, 'the same event over both');

    // A deposit's notification, live on both.
    const deposit = await machine.POST('/events/deposit/', {
      params: { header: { 'Idempotency-Key': `tail-${portfolioId}` } },
      body: { data: { amount: '250.00', currency: 'EUR', portfolio: portfolioId, external_id: `tail-${portfolioId}` } },
    });
    assert.equal(deposit.response.status, 201);
    for (const s of [overNats, overMqtt])
      await waitFor(
        'the deposit event',
        async () =>
          assert.ok(
            lines(s).some((line) => line.entity_id === portfolioId && line.subject === 'notifications' && line.action === 'deposit-received'),
            s.stdout() + s.stderr(),
          ),
        30_000,
      );
    await waitFor(
      'the example to print the event',
      async () =>
        assert.ok(
          lines(example).some((e) => (e.data as { id?: string })?.id === portfolioId),
          example.stdout(),
        ),
      30_000,
    );
    const event = lines(example).find((e) => (e.data as { id?: string }).id === portfolioId)!;
    assert.deepEqual([event.subject, event.action, event.id], ['portfolios', 'creation', creation(overNats)!.id]);

    for (const [s, signal] of [
      [overNats, 'SIGTERM'],
      [overMqtt, 'SIGTERM'],
      [example, 'SIGINT'],
    ] as const) {
      const exited = exitOf(s.child);
      s.child.kill(signal);
      assert.deepEqual(await exited, { code: 0, signal: null }, `${s.stderr()}`);
    }
  });

  it('refuses a wrong bus password over NATS and MQTT with exit code 1, printing no event and no password, and the right one still subscribes', async () => {
    const wrong = join(dataDir, 'wrong-credentials.json');
    writeFileSync(wrong, JSON.stringify({ ...credentials, bus_password: 'not-the-password' }), { mode: 0o600 });
    for (const options of [[], ['--mqtt']]) {
      const refused = tail(wrong, ...options);
      subscribers.push(refused);
      assert.deepEqual(await exitOf(refused.child), { code: 1, signal: null }, options.join(' '));
      assert.equal(refused.stdout(), '');
      assert.match(
        refused.stderr(),
        new RegExp(
          `cannot subscribe at ${options.length ? credentials.mqtt_url : credentials.nats_url} as ${credentials.bus_username}: .*(Authorization Violation|Not authorized)`,
        ),
      );
      assert.equal(refused.stderr().includes('not-the-password'), false);
      assert.equal(refused.stderr().includes(credentials.bus_password), false);
    }
    const still = tail(file);
    subscribers.push(still);
    await subscribed(still, /listening on NATS subject/);
    const exited = exitOf(still.child);
    still.child.kill('SIGINT');
    assert.deepEqual(await exited, { code: 0, signal: null });
  });

  it('refuses a missing file, a file without a bus login and an unknown option, saying what to do', async () => {
    const bare = join(dataDir, 'no-bus-credentials.json');
    writeFileSync(bare, JSON.stringify({ tenant_id: credentials.tenant_id, nats_url: credentials.nats_url }), { mode: 0o600 });
    const cases: [args: string[], code: number, said: RegExp][] = [
      [['--credentials', join(dataDir, 'missing.json')], 1, /cannot read .*missing\.json: run npm start first/],
      [['--credentials', bare], 1, /no-bus-credentials\.json has no bus_username: run npm start/],
      [['--credentials', file, '--bogus'], 2, /Unknown option '--bogus'[\s\S]*usage: npm run events:tail/],
    ];
    for (const [args, code, said] of cases) {
      const refused = run(process.execPath, ['--import', 'tsx', 'scripts/events-tail.ts', ...args]);
      subscribers.push(refused);
      assert.deepEqual(await exitOf(refused.child), { code, signal: null }, args.join(' '));
      assert.equal(refused.stdout(), '');
      assert.match(refused.stderr(), said);
    }
  });
});
