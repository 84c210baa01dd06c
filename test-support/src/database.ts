import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { newUlid } from '@platform/shared';
import { startNatsServer, type NatsServer } from '@platform/dev-stack/nats-server';
import { freePort } from '@platform/dev-stack/ports';

export type TestDatabase = { url: string; db: Knex; drop: () => Promise<void> };

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`npm test\`, which prepares Postgres and NATS.`);
  return value;
}

/**
 * Waits until every transaction that began before this call has ended: GET /events/ hands out an
 * event only once every transaction older than the oldest still running has ended, anywhere on the
 * server (docs/adr/0002-event-feed-cursor.md), so a poll right after a write can miss it while a
 * background job's transaction is open. Not for a test that holds a transaction open itself.
 */
export async function eventsSettled(db: Knex, timeoutMs = 20_000): Promise<void> {
  const { rows } = await db.raw('select pg_current_xact_id()::text as xid');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const settled = await db.raw('select pg_snapshot_xmin(pg_current_snapshot()) > ?::xid8 as ok', [rows[0].xid]);
    if (settled.rows[0].ok) return;
    if (Date.now() > deadline) throw new Error(`a transaction older than ${rows[0].xid} stayed open for ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A fresh database for one test file, cloned from the migrated template that `npm test` prepared. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = env('TEST_PG_ADMIN_URL');
  const name = `test_${newUlid().toLowerCase()}`;
  const admin = knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name} template ${env('TEST_PG_TEMPLATE')}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = knex({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 4 } });
  return {
    url: url.toString(),
    db,
    drop: async () => {
      await db.destroy();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

export const testNatsUrl = () => env('NATS_URL');

/**
 * The services' own credentials on the run's NATS server (docs/adr/0026-bus-authorization.md);
 * a NATS_URL given from outside serves both.
 */
export const testServiceNatsUrls = () => ({
  management: process.env.TEST_NATS_MANAGEMENT_URL ?? testNatsUrl(),
  data: process.env.TEST_NATS_DATA_URL ?? testNatsUrl(),
});
export const testWorkDir = () => env('TEST_WORK_DIR');

/**
 * A nats-server of the caller's own (JetStream, MQTT, loopback, state under the run's work folder), for
 * tests whose services must not share the platform's internal subjects with other tests' services
 * (the optimizer's durable consumers would otherwise take each other's requests and results).
 */
export async function startOwnNats(): Promise<NatsServer> {
  const dir = join(testWorkDir(), `nats-${newUlid().toLowerCase()}`);
  return startNatsServer({ port: await freePort(), mqttPort: await freePort(), dir, name: `test-${newUlid().toLowerCase()}`, log: () => undefined });
}
