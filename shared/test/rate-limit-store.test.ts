import assert from 'node:assert/strict';
import pg from 'pg';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { freePort } from '@platform/dev-stack/ports';
import { createTestDatabase, type TestDatabase } from '@platform/test-support/database';
import { postgresRateLimitStore, type CounterWaits } from '../src/http/rate-limit.ts';

// The counters of docs/adr/0023-rate-limits.md in the real rate_limits table: two stores on pools
// of their own are two replicas of a service.

/** How many of `requests` consumes of `key` were admitted; every other one must be a refusal. */
async function admitted(consumes: Promise<unknown>[]): Promise<number> {
  const outcomes = await Promise.allSettled(consumes);
  for (const o of outcomes) if (o.status === 'rejected') assert.ok(o.reason instanceof RateLimiterRes, String(o.reason));
  return outcomes.filter((o) => o.status === 'fulfilled').length;
}

describe('rate limits: the counters in Postgres', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  const pools: pg.Pool[] = [];
  const pool = (url: string) => {
    const p = new pg.Pool({ connectionString: url, max: 4 });
    p.on('error', () => undefined);
    pools.push(p);
    return p;
  };
  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await database?.drop();
  });

  /**
   * Ten requests on each of two replicas for one key of budget 5, while the table is locked for
   * 600 ms: Postgres answers, but late, as under a busy pool.
   */
  async function burstWhileSlow(key: string, waits?: CounterWaits): Promise<number> {
    const replicas = [postgresRateLimitStore(pool(database.url), 'pool', waits), postgresRateLimitStore(pool(database.url), 'pool', waits)];
    const consumes: Promise<unknown>[] = [];
    await database.db.transaction(async (trx) => {
      await trx.raw('lock table rate_limits in exclusive mode');
      for (const store of replicas) for (let i = 0; i < 10; i++) consumes.push(store.counter('rl', 5, 60).consume(key, 1));
      await new Promise((resolve) => setTimeout(resolve, 600));
    });
    return admitted(consumes);
  }

  it('a slow Postgres is waited for: two replicas admit one budget between them, where giving up after 100 ms lets each admit a budget of its own', async () => {
    assert.equal(await burstWhileSlow('slow-waited'), 5);
    // The failure the wait prevents: each replica's memory counter admits its own 5.
    assert.equal(await burstWhileSlow('slow-given-up', { answeringMs: 100, awayMs: 100 }), 10);
  });

  it('a Postgres that is away: the memory counter of the replica answers, with the same budget, and never an error', async () => {
    const url = new URL(database.url);
    url.port = String(await freePort());
    const store = postgresRateLimitStore(pool(url.toString()), 'pool');
    const counter = store.counter('rl', 3, 60);
    assert.equal(await admitted(Array.from({ length: 5 }, () => counter.consume('away', 1))), 3);
    assert.equal(await admitted([counter.consume('away', 1)]), 0);
  });
});
