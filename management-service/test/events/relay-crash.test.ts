import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { connectNats, jetstreamManager, streams, subjects } from '@platform/shared';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { createTestDatabase, testNatsUrl, type TestDatabase } from '@platform/test-support/database';
import { testSigningKey } from '@platform/test-support/platform';
import { createTenant } from '../../src/admin/provisioning.ts';
import { envelope } from '../../src/domain/events.ts';
import { insertEvents } from '../../src/store/outbox.ts';
import { inTenant } from '../../src/store/tenant-scope.ts';

describe('outbox relay killed mid-batch', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  const startService = async (): Promise<ChildProcess> => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'management-service/src/main.ts'], {
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: '0',
        DATABASE_URL: database.url,
        NATS_URL: testNatsUrl(),
        JWT_PRIVATE_KEY: await testSigningKey(),
        LOG_LEVEL: 'error',
        MIGRATE_ON_START: 'false',
      },
      stdio: 'ignore',
    });
    await waitFor('management service', async () => {
      if (!(await fetch(`http://127.0.0.1:${port}/livez`)).ok) throw new Error('not up');
    });
    return child;
  };

  const countWhere = async (published: boolean) => {
    const query = database.db('outbox');
    if (published) query.whereNotNull('published_at');
    else query.whereNull('published_at');
    return Number(((await query.count('* as n')) as { n: string }[])[0]!.n);
  };

  it('loses nothing and publishes nothing twice when the process dies and another takes over', async () => {
    const tenantId = `crash-${process.pid}`;
    await createTenant(database.db, { id: tenantId });
    const now = new Date().toISOString();
    const total = 10_000;
    for (let from = 0; from < total; from += 2000) {
      await inTenant(database.db, tenantId, (trx) =>
        insertEvents(
          trx,
          tenantId,
          Array.from({ length: 2000 }, (_, i) => envelope('portfolios', 'creation', { id: `P${from + i}` }, now, `P${from + i}`)),
        ),
      );
    }
    const first = await startService();
    // Kill it without warning while it is working through the batches.
    await waitFor('first batches published', async () => {
      if ((await countWhere(true)) === 0) throw new Error('nothing yet');
    });
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    assert.ok((await countWhere(false)) > 0, 'the first process did not finish: the test kills it mid-way');

    const second = await startService();
    try {
      await waitFor(
        'all published',
        async () => {
          const left = await countWhere(false);
          if (left > 0) throw new Error(`${left} left`);
        },
        60_000,
      );
      const nc = await connectNats(testNatsUrl(), 'crash-check');
      const jsm = await jetstreamManager(nc);
      const subject = subjects.tenantEvents(tenantId);
      const info = await jsm.streams.info(streams.tenantEvents.name, { subjects_filter: subject });
      await nc.close();
      assert.equal(Number(info.state.subjects?.[subject]), total, 'every event once in the stream');
    } finally {
      second.kill('SIGTERM');
      await new Promise((r) => second.once('exit', r));
    }
  });
});
