import assert from 'node:assert/strict';
import { createLogger } from '@platform/shared';
import { waitFor } from '@platform/dev-stack/ports';
import { createTestDatabase, type TestDatabase } from '@platform/test-support/database';
import { startNotifiedLoop } from '../../src/jobs/notified-loop.ts';

/**
 * The loop behind the outbox relay and the broker settlement: woken by NOTIFY, and woken by NOTIFY
 * again after its listener's connection was lost (as when Postgres restarts), not left polling.
 */
describe('notified loop', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database?.drop());

  it('listens again after its connection is cut, and a NOTIFY wakes it as before', async () => {
    const channel = `wake_${process.pid}`;
    let rounds = 0;
    // Polling once an hour: within this test only a NOTIFY (or listening again) starts a round.
    const loop = await startNotifiedLoop({
      name: 'test loop',
      databaseUrl: database.url,
      channel,
      pollMs: 3_600_000,
      logger: createLogger('test', 'error'),
      step: async () => {
        rounds++;
        return false;
      },
      relisten: { baseMs: 50, maxMs: 200 },
    });
    const listeners = async () =>
      (await database.db.raw(`select pid from pg_stat_activity where query = ?`, [`listen "${channel}"`])).rows.map((r: { pid: number }) => r.pid) as number[];
    const roundAfter = async (what: string, before: number, action: () => Promise<unknown>) => {
      await action();
      await waitFor(what, async () => {
        if (rounds <= before) throw new Error(`${rounds} rounds`);
      });
    };
    try {
      await waitFor('the first round', async () => {
        if (rounds < 1) throw new Error('none yet');
      });
      await roundAfter('a round after a NOTIFY', rounds, () => database.db.raw('select pg_notify(?, ?)', [channel, '']));

      const [first] = await listeners();
      assert.ok(first, 'the loop listens on its channel');
      await database.db.raw('select pg_terminate_backend(?)', [first]);
      await waitFor('a new listener', async () => {
        const now = await listeners();
        if (now.length !== 1 || now[0] === first) throw new Error(`listeners ${now.join(', ')}`);
      });
      // Listening again runs a round (NOTIFYs sent while nobody listened went nowhere) …
      await waitFor('the round after listening again', async () => {
        if (rounds < 3) throw new Error(`${rounds} rounds`);
      });
      // … and NOTIFY wakes the loop again.
      await roundAfter('a round after a NOTIFY to the new listener', rounds, () => database.db.raw('select pg_notify(?, ?)', [channel, '']));
    } finally {
      await loop.stop();
    }
    assert.deepEqual(await listeners(), [], 'stopping ends the listener');
  });
});
