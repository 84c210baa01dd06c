import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { startSupervisor, type RunningSupervisor } from '@platform/dev-stack/supervisor';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, portAnswers, waitFor } from '@platform/dev-stack/ports';
import { passwordAccepted, postgresSystemUser, startEmbeddedPostgres } from '@platform/dev-stack/postgres';
import { exitOf, type Exit } from '@platform/dev-stack/processes';
import { childrenOf, processesOf } from '@platform/dev-stack/process-list';
import { connectNats } from '@platform/shared';
import { dataClient, managementClient } from '../src/clients.ts';

type Credentials = {
  tenant_id: string;
  risk_profiles: Record<string, string>;
  management_url: string;
  data_url: string;
  access_key_id: string;
  secret_access_key: string;
  api_key: string;
  policies: Record<string, string>;
  bus_username: string;
  bus_password: string;
  nats_url: string;
  mqtt_url: string;
};
const LEVELS = ['defensive', 'conservative', 'balanced', 'growth', 'aggressive'];
/** The demo's policy whose equity is in dollar ETFs, beside the five in EUR. */
const DOLLAR_LEVEL = 'balanced_usd';

/** Runs `npm start`'s script (or, with `npm`, `npm start`) with its own data folder and ports; resolves once it prints ready. */
function start(dataDir: string, ports: Record<string, number>, options: { npm?: boolean } = {}): Promise<RunningSupervisor> {
  const env: NodeJS.ProcessEnv = { ...process.env, PLATFORM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  for (const [name, port] of Object.entries(ports)) env[name] = String(port);
  delete env.DATABASE_URL;
  delete env.NATS_URL;
  return startSupervisor(env, options);
}

/** How the supervisor ended, failing with its output when it still runs after `ms`. */
async function exitWithin(run: { child: ChildProcess; output: () => string }, ms: number): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`npm start still runs after ${ms} ms:\n${run.output()}`)), ms)));
  try {
    return await Promise.race([exitOf(run.child), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The pid of the supervisor's child whose command line holds `part`, once there is one other than `not`. */
async function childPid(supervisor: ChildProcess, part: string, not?: number): Promise<number> {
  let pid: number | undefined;
  await waitFor(
    `a child running ${part}`,
    async () => {
      pid = childrenOf(supervisor.pid!, part).find((p) => p.pid !== not)?.pid;
      if (pid === undefined) throw new Error('none yet');
    },
    60_000,
  );
  return pid!;
}

describe('npm start', function () {
  this.timeout(300_000);
  // One data folder for every start: the sample universe is generated once, on the first.
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-start-'));
  let ports: Record<string, number>;

  before(async () => {
    ports = {
      MANAGEMENT_PORT: await freePort(),
      DATA_PORT: await freePort(),
      MANAGEMENT_METRICS_PORT: await freePort(),
      DATA_METRICS_PORT: await freePort(),
      PG_PORT: await freePort(),
      NATS_PORT: await freePort(),
      MQTT_PORT: await freePort(),
    };
  });
  after(() => {
    for (const left of processesOf(dataDir)) process.kill(left.pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const stop = async (child: ChildProcess) => {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGINT');
    assert.equal(await exited, 0);
    for (const port of Object.values(ports)) assert.equal(await portAnswers(port), false, `port ${port} still open after Ctrl-C`);
  };

  /** After the supervisor exited: none of its processes (Postgres backends included) is left, and its ports are free. */
  const assertNothingLeft = async () => {
    await waitFor(
      'the processes of the data folder to end',
      async () => {
        const left = processesOf(dataDir);
        if (left.length) throw new Error(left.map((p) => `${p.pid} ${p.command}`).join('\n'));
      },
      15_000,
    );
    for (const port of Object.values(ports)) assert.equal(await portAnswers(port), false, `port ${port} still open`);
  };

  /**
   * The demo tenant's sample policies as a client reads them: every one answers, holds EUR-priced
   * ETFs of the sample at weights within its bands and cash buffer; the policies of the tenant, by id.
   */
  const assertSamplePolicies = async (credentials: Credentials, token: string) => {
    const management = managementClient(credentials.management_url, token);
    const data = dataClient(credentials.data_url, credentials.tenant_id, credentials.api_key);
    const policies = [];
    for (const level of LEVELS) {
      const { data: policy, response } = await management.GET('/policies/{policy_id}', { params: { path: { policy_id: credentials.policies[level]! } } });
      assert.equal(response.status, 200, level);
      assert.equal(policy!.external_id, `sample-policy-${level}`);
      assert.equal(policy!.name, `Sample ${level[0]!.toUpperCase()}${level.slice(1)}`);
      policies.push(policy!);
    }
    const isins = [...new Set(policies.flatMap((p) => Object.keys(p.config.model_portfolio)))];
    const reference = await data.POST('/data/reference/query/', {
      body: { instrument_ids: isins, fields: ['NAME', 'INSTRUMENT_TYPE', 'ASSET_CLASS', 'CURRENCY', 'PRICE'], fields_extra: [] },
    });
    const instruments = (reference.data as { data: Record<string, Record<string, string | number | null>> }).data;
    for (const policy of policies) {
      const perClass: Record<string, number> = {};
      let total = 0;
      for (const [isin, weight] of Object.entries(policy.config.model_portfolio)) {
        const instrument = instruments[isin];
        assert.ok(instrument, `${policy.name}: ${isin} is an instrument of the sample`);
        assert.match(String(instrument.name), /^Sample .* ETF /);
        assert.deepEqual([instrument.instrument_type, instrument.currency], ['ETF', 'EUR'], `${policy.name}: ${isin}`);
        assert.ok(Number(instrument.price) > 0);
        const bps = Math.round(weight * 10_000);
        perClass[String(instrument.asset_class)] = (perClass[String(instrument.asset_class)] ?? 0) + bps;
        total += bps;
      }
      assert.equal(total, 10_000 - Math.round(policy.config.cash_buffer * 10_000), `${policy.name}: weights and cash buffer make the whole`);
      assert.equal(policy.config.fractional_shares, false);
      for (const [assetClass, bps] of Object.entries(perClass)) {
        const [lo, hi] = policy.config.asset_class_bands[assetClass]!;
        assert.ok(lo! * 10_000 <= bps && bps <= hi! * 10_000, `${policy.name}: ${assetClass} ${bps} bps within [${lo}, ${hi}]`);
      }
    }
    // The policy in dollars: its equity ETFs priced in USD, its bonds in EUR, converting at 10 bps.
    const dollar = await management.GET('/policies/{policy_id}', { params: { path: { policy_id: credentials.policies[DOLLAR_LEVEL]! } } });
    assert.equal(dollar.response.status, 200);
    assert.deepEqual([dollar.data!.external_id, dollar.data!.name, dollar.data!.config.fx_cost_bps], ['sample-policy-balanced-usd', 'Sample Balanced USD', 10]);
    const dollarIsins = Object.keys(dollar.data!.config.model_portfolio);
    const dollarReference = await data.POST('/data/reference/query/', {
      body: { instrument_ids: dollarIsins, fields: ['ASSET_CLASS', 'CURRENCY'], fields_extra: [] },
    });
    const dollarFields = (dollarReference.data as { data: Record<string, Record<string, string | null>> }).data;
    assert.deepEqual([...new Set(dollarIsins.map((isin) => `${dollarFields[isin]!.asset_class} ${dollarFields[isin]!.currency}`))].sort(), [
      'EQUITY USD',
      'FIXED_INCOME EUR',
    ]);
    const all = await management.GET('/policies/', { params: { query: { limit: 100 } } });
    return Object.fromEntries(all.data!.results.map((p) => [p.id, (p as { version: number }).version]));
  };

  it('starts on an older data folder, serves both interfaces with the demo credentials, stops everything on Ctrl-C, and reuses its data', async () => {
    // An older `npm start` gave the postgres role a fixed password.
    const former = await startEmbeddedPostgres({
      dir: join(dataDir, 'pg'),
      port: ports.PG_PORT!,
      persistent: true,
      password: 'platform',
      log: () => undefined,
    });
    await former.stop();

    const first = await start(dataDir, ports);
    for (const port of [ports.MANAGEMENT_METRICS_PORT, ports.DATA_METRICS_PORT]) {
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      assert.equal(metrics.status, 200, 'each service answers GET /metrics on its metrics port');
      assert.match(await metrics.text(), /^# TYPE http_request_duration_seconds histogram$/m);
    }
    const password = readFileSync(join(dataDir, 'pg-password'), 'utf8').trim();
    assert.ok(password.length >= 32, 'a generated password');
    assert.equal(await passwordAccepted(ports.PG_PORT!, password), true);
    assert.equal(await passwordAccepted(ports.PG_PORT!, 'platform'), false, 'the former fixed password is replaced');
    const mode = (file: string) => statSync(join(dataDir, file)).mode & 0o777;
    for (const file of ['pg-password', 'credentials.json', 'jwt-signing-key.pem', 'platform.json']) assert.equal(mode(file), 0o600, file);
    const pgUser = postgresSystemUser();
    assert.equal(mode('pg'), 0o700);
    assert.equal(statSync(join(dataDir, 'pg')).uid, pgUser?.uid ?? process.getuid!(), 'the Postgres folder belongs to the user Postgres runs as');
    // As root the postgres user must traverse the data folder to reach its own: its group only.
    assert.equal(mode('.'), pgUser ? 0o710 : 0o700);
    if (pgUser) assert.equal(statSync(dataDir).gid, pgUser.gid);

    const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    assert.deepEqual(Object.keys(credentials).sort(), [
      'access_key_id',
      'api_key',
      'bus_password',
      'bus_username',
      'data_url',
      'management_url',
      'mqtt_url',
      'nats_url',
      'policies',
      'risk_profiles',
      'secret_access_key',
      'tenant_id',
    ]);
    // The bus takes the demo tenant's credential and nobody without one (docs/adr/0026-bus-authorization.md).
    const natsAddress = `nats://127.0.0.1:${ports.NATS_PORT}`;
    assert.equal(credentials.nats_url, natsAddress, 'the NATS server of this start, without a login in the URL');
    await (await connectNats(natsAddress, 'demo-subscriber', { user: credentials.bus_username, pass: credentials.bus_password, reconnect: false })).close();
    await assert.rejects(connectNats(natsAddress, 'anonymous', { reconnect: false }), /Authorization Violation/i);
    assert.deepEqual(Object.keys(credentials.policies), [...LEVELS, DOLLAR_LEVEL]);
    const login = await managementClient(credentials.management_url).POST('/auth/login/', {
      body: { access_key_id: credentials.access_key_id, secret_access_key: credentials.secret_access_key },
    });
    assert.equal(login.response.status, 200);
    assert.equal(login.data?.token_type, 'Bearer');
    // The administration console, its data pages pointed at the data service, which allows the console's origin
    // (docs/adr/0037-console-and-the-data-service.md).
    assert.equal((await fetch(`${credentials.management_url}/console/`)).status, 200);
    const consoleConfig = await fetch(`${credentials.management_url}/console/config.json`);
    assert.deepEqual(await consoleConfig.json(), { data_service_url: credentials.data_url, docs_url: '/docs/' });
    const preflight = await fetch(`${credentials.data_url}/performance/future/`, {
      method: 'OPTIONS',
      headers: { origin: credentials.management_url, 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), credentials.management_url);
    const policyVersions = await assertSamplePolicies(credentials, login.data!.access_token);
    assert.deepEqual(
      policyVersions,
      Object.fromEntries([...LEVELS, DOLLAR_LEVEL].map((level) => [credentials.policies[level], 1])),
      'the tenant has the six policies',
    );
    // The default questionnaire and the risk profiles that band its score onto the sample policies (docs/default-questionnaire.md).
    const machine = managementClient(credentials.management_url, login.data!.access_token);
    const questionnaires = await machine.GET('/suitability-profiler/questionnaires/', { params: { query: { query: "external_id eq 'default-suitability'" } } });
    assert.equal(questionnaires.data?.count, 1, 'the default questionnaire');
    assert.deepEqual(Object.keys(credentials.risk_profiles), LEVELS);
    for (const level of LEVELS) {
      const band = await machine.GET('/risk-profiles/{risk_profile_id}', { params: { path: { risk_profile_id: credentials.risk_profiles[level]! } } });
      assert.equal(band.data?.policy_id, credentials.policies[level], `the ${level} risk profile names the ${level} policy`);
    }
    const data = dataClient(credentials.data_url, credentials.tenant_id, credentials.api_key);
    const ready = await data.GET('/readyz');
    assert.equal(ready.response.status, 200);
    await stop(first.child);

    const second = await start(dataDir, ports);
    const again = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    assert.equal(again.access_key_id, credentials.access_key_id, 'a second start keeps the credentials');
    assert.equal(readFileSync(join(dataDir, 'pg-password'), 'utf8').trim(), password, 'and the Postgres password');
    const relogin = await managementClient(again.management_url).POST('/auth/login/', {
      body: { access_key_id: again.access_key_id, secret_access_key: again.secret_access_key },
    });
    assert.equal(relogin.response.status, 200, 'and its database');
    assert.deepEqual(again.policies, credentials.policies, 'and the sample policies');
    assert.deepEqual(again.risk_profiles, credentials.risk_profiles, 'and the sample risk profiles');
    assert.deepEqual(await assertSamplePolicies(again, relogin.data!.access_token), policyVersions, 'neither duplicated nor changed');
    await stop(second.child);
  });

  it('stops everything with exit code 0 on SIGINT or SIGTERM sent to the pid of `npm start`, and starts again after', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const run = await start(dataDir, ports, { npm: true });
      // Only npm's process is signalled, as systemd or a process manager does: not its group, not its child.
      process.kill(run.child.pid!, signal);
      assert.deepEqual(await exitWithin(run, 60_000), { code: 0, signal: null }, `after ${signal}`);
      assert.match(run.output(), /\[start\] stopping/);
      await assertNothingLeft();
    }
  });

  it('restarts a service killed with SIGKILL, saying so; nats-server killed stops everything with exit code 1', async () => {
    const run = await start(dataDir, ports);
    for (const [name, entry, port] of [
      ['management', 'management-service/src/main.ts', ports.MANAGEMENT_PORT],
      ['data', 'data-service/src/main.ts', ports.DATA_PORT],
    ] as const) {
      const killed = await childPid(run.child, entry);
      process.kill(killed, 'SIGKILL');
      await childPid(run.child, entry, killed);
      await waitFor(
        `${name} /livez after its restart`,
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/livez`);
          if (res.status !== 200) throw new Error(`status ${res.status}`);
        },
        60_000,
      );
      assert.match(run.output(), new RegExp(`\\[start\\] ${name} exited \\(killed by SIGKILL\\); restarting it`));
    }

    process.kill(await childPid(run.child, 'nats-server'), 'SIGKILL');
    assert.deepEqual(await exitWithin(run, 60_000), { code: 1, signal: null });
    assert.match(run.output(), /\[start\] nats-server exited \(killed by SIGKILL\); stopping the platform/);
    await assertNothingLeft();
  });

  it('stops everything with exit code 1 when a service keeps dying', async () => {
    const run = await start(dataDir, ports);
    let killed: number | undefined;
    // The first exit and three restarts; the fourth restart would be one too many within the minute.
    for (let exits = 0; exits < 4; exits++) {
      killed = await childPid(run.child, 'management-service/src/main.ts', killed);
      process.kill(killed, 'SIGKILL');
    }
    assert.deepEqual(await exitWithin(run, 60_000), { code: 1, signal: null });
    assert.equal(run.output().match(/\[start\] management exited \(killed by SIGKILL\); restarting it/g)?.length, 3);
    assert.match(run.output(), /\[start\] management exited \(killed by SIGKILL\) after 3 restarts within 60 s; it keeps dying: stopping the platform/);
    await assertNothingLeft();
  });

  it('stops everything with exit code 1 when Postgres is killed', async () => {
    const run = await start(dataDir, ports);
    process.kill(await childPid(run.child, 'native/bin/postgres'), 'SIGKILL');
    assert.deepEqual(await exitWithin(run, 60_000), { code: 1, signal: null });
    assert.match(run.output(), /\[start\] postgres exited \(killed by SIGKILL\); stopping the platform/);
    await assertNothingLeft();
  });
});
