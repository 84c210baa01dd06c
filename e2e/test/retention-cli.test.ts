import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createTestDatabase, type TestDatabase } from '@platform/test-support/database';

// `npm run cli -- retention run`: the nightly retention run now, with the service's settings (docs/adr/0061-retention.md).
describe('retention run through the CLI', function () {
  this.timeout(60_000);
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database?.drop());

  const cli = (env: Record<string, string>) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'cli/src/main.ts', 'retention', 'run'], {
      env: { ...process.env, DATABASE_URL: database.url, ...env },
    });

  it('removes what is past its period, prints the counts, and records the day', async () => {
    const db = database.db;
    await db('tenants').insert({ id: 'acme', name: 'Acme' });
    const key = (name: string, expiresAt: string) =>
      db('idempotency_keys').insert({ tenant_id: 'acme', method: 'POST', path: '/portfolios/', key: name, request_hash: 'h', expires_at: expiresAt });
    await key('expired', '2020-01-01T00:00:00.000Z');
    await key('live', '2999-01-01T00:00:00.000Z');
    const event = (id: string, createdAt: Date) => ({
      tenant_id: 'acme',
      event_id: id,
      entity_id: 'P1',
      subject: 'portfolios',
      action: 'creation',
      envelope: '{}',
      created_at: createdAt,
      published_at: createdAt,
    });
    const day = 86_400_000;
    await db('outbox').insert([event('old', new Date(Date.now() - 3 * day)), event('recent', new Date(Date.now() - day / 2))]);

    const { stdout } = await cli({ OUTBOX_RETENTION_DAYS: '2', RETENTION_BATCH_ROWS: '1' });
    const run = JSON.parse(stdout) as { day: string; deleted: Record<string, number> };
    assert.equal(run.deleted.idempotency_keys, 1);
    assert.equal(run.deleted.outbox_published, 1);
    assert.deepEqual(
      (await db('idempotency_keys').select('key')).map((r) => r.key),
      ['live'],
    );
    assert.deepEqual(
      (await db('outbox').select('event_id')).map((r) => r.event_id),
      ['recent'],
    );
    assert.equal((await db('retention_runs').select(db.raw('day::text as day')).first()).day, run.day);
  });

  it('stops on a bad setting with how to fix it, and removes nothing', async () => {
    const before = await database.db('outbox').count('* as n').first();
    await assert.rejects(
      cli({ OUTBOX_RETENTION_DAYS: 'seven' }),
      (e: { code: number; stderr: string }) => e.code === 1 && /OUTBOX_RETENTION_DAYS/.test(e.stderr),
    );
    assert.deepEqual(await database.db('outbox').count('* as n').first(), before);
  });
});
