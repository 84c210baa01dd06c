import assert from 'node:assert/strict';
import knex, { type Knex } from 'knex';
import { createLogger, createMetricsRegistry } from '@platform/shared';
import { createTestDatabase, type TestDatabase } from '@platform/test-support/database';
import { RETENTION_RULES, type RetentionRule } from '../../src/jobs/retention-rules.ts';
import { runRetention, type RetentionOptions } from '../../src/jobs/retention.ts';
import { managementMetrics } from '../../src/metrics.ts';
import { retentionSeed } from './retention-seed.ts';

const DAY = 86_400_000;

/** The nightly retention (docs/adr/0061-retention.md) against a real Postgres, with a fixed clock. */
describe('retention job', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let db: Knex;
  const logger = createLogger('test', 'error');
  const replicas: Knex[] = [];
  /** Another replica's own pool on the same database. */
  const replica = () => {
    const r = knex({ client: 'pg', connection: database.url, pool: { min: 0, max: 3 } });
    replicas.push(r);
    return r;
  };

  before(async () => {
    database = await createTestDatabase();
    db = database.db;
  });
  after(async () => {
    for (const r of replicas) await r.destroy();
    await database?.drop();
  });
  beforeEach(async () => {
    for (const table of ['retention_runs', 'outbox', 'idempotency_keys', 'rate_limits', 'token_revocations', 'refresh_tokens', 'refresh_token_families'])
      await db(table).delete();
  });

  const options = (now: Date, extra: Partial<RetentionOptions> = {}): RetentionOptions => ({
    db,
    logger,
    settings: { outboxDays: 30, erasedUserYears: 10 },
    batch: 1000,
    now: () => now,
    ...extra,
  });
  const keys = async (table: string, column: string) => (await db(table).select(column).orderBy(column)).map((r) => String(r[column]));

  it('on a fresh database removes nothing and records the day', async () => {
    const now = new Date('2026-11-28T03:00:00.000Z');
    const run = await runRetention(options(now));
    assert.deepEqual(run?.deleted, {
      idempotency_keys: 0,
      rate_limit_counters: 0,
      token_revocations: 0,
      refresh_token_chains: 0,
      outbox_published: 0,
      erased_user_versions: 0,
    });
    const rows = await db('retention_runs').select(db.raw('day::text as day'), 'deleted');
    assert.deepEqual(rows, [{ day: '2026-11-28', deleted: run!.deleted }]);
  });

  it('each rule removes exactly the rows past its period and keeps the others', async () => {
    const now = new Date('2026-11-28T03:00:00.000Z');
    const t = now.getTime();
    const seed = retentionSeed(db, 'acme');
    await seed.tenant();
    await seed.idempotencyKey('expired', t - 1);
    await seed.idempotencyKey('live', t + 1);
    await seed.rateLimit('rl:addr:gone', t - 1);
    await seed.rateLimit('rl:addr:live', t + 1000);
    await seed.revocation('gone', t - 1);
    await seed.revocation('live', t + 1);
    const deadChain = await seed.chain(t - 40 * DAY, [t - 10 * DAY, t - 1]);
    // A spent token of a live chain stays with it: presenting it again revokes the chain.
    const liveChain = await seed.chain(t - 40 * DAY, [t - 10 * DAY, t + DAY]);
    // Empty, and too young to be told from a chain whose first token is being written.
    const youngChain = await seed.chain(t - DAY / 2, []);
    await seed.outbox(1, t - 30 * DAY - 1, true);
    const [atBoundary] = await seed.outbox(1, t - 30 * DAY, true);
    const [oldUnpublished] = await seed.outbox(1, t - 60 * DAY, false);

    const run = await runRetention(options(now));

    assert.deepEqual(run?.deleted, {
      idempotency_keys: 1,
      rate_limit_counters: 1,
      token_revocations: 1,
      refresh_token_chains: 1,
      outbox_published: 1,
      erased_user_versions: 0,
    });
    assert.deepEqual(await keys('idempotency_keys', 'key'), ['live']);
    assert.deepEqual(await keys('rate_limits', 'key'), ['rl:addr:live']);
    assert.deepEqual(await keys('token_revocations', 'subject'), ['live']);
    assert.deepEqual(await keys('refresh_token_families', 'id'), [liveChain, youngChain].sort());
    assert.equal(await db('refresh_tokens').where({ family_id: deadChain }).first(), undefined);
    assert.equal((await db('refresh_tokens').where({ family_id: liveChain })).length, 2);
    assert.deepEqual(await keys('outbox', 'event_id'), [atBoundary!, oldUnpublished!].sort());
  });

  it('removes more rows than one batch, a batch per statement, and counts them in the metric', async () => {
    const now = new Date('2026-11-28T03:00:00.000Z');
    const t = now.getTime();
    const seed = retentionSeed(db, 'acme');
    await seed.tenant();
    await seed.outbox(2_345, t - 40 * DAY, true);
    const kept = await seed.outbox(3, t - DAY, true);
    const statements: number[] = [];
    const counting: RetentionRule[] = RETENTION_RULES.map((rule) => ({
      ...rule,
      remove: async (d, cutoff, limit) => {
        const removed = await rule.remove(d, cutoff, limit);
        if (rule.name === 'outbox_published') statements.push(removed);
        return removed;
      },
    }));
    const registry = createMetricsRegistry('management-service');
    const metrics = managementMetrics(registry, db, logger);

    const run = await runRetention(options(now, { batch: 1000, rules: counting, metrics: metrics.retention }));

    assert.equal(run?.deleted.outbox_published, 2_345);
    assert.deepEqual(statements, [1000, 1000, 345]);
    assert.deepEqual(await keys('outbox', 'event_id'), kept.sort());
    const counter = (await registry.getSingleMetric('retention_deleted_rows_total')!.get()).values;
    assert.deepEqual(
      counter.map((v) => [v.labels.rule, v.value]),
      [['outbox_published', 2_345]],
    );
    const gauge = (await registry.getSingleMetric('retention_last_run_timestamp_seconds')!.get()).values;
    const finished = await db('retention_runs').select(db.raw('extract(epoch from finished_at)::float8 as s')).first();
    assert.equal(gauge[0]!.value, finished.s);
  });

  it('lets one replica run at a time: a second run while the first holds the lock skips, and the day runs once', async () => {
    const now = new Date('2026-11-28T03:00:00.000Z');
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const blocking: RetentionRule = {
      name: 'blocking',
      active: true,
      cutoff: (n) => n,
      remove: async () => {
        entered();
        await gate;
        return 0;
      },
    };
    const first = runRetention({ ...options(now, { db: replica(), rules: [blocking] }), skipDay: '2026-11-28' });
    await inside;
    const second = await runRetention({ ...options(now, { db: replica() }), skipDay: '2026-11-28' });
    assert.equal(second, undefined, 'the second replica skipped');
    release();
    assert.deepEqual((await first)?.deleted, { blocking: 0 });
    // Later the same day (a restart, another replica's next check) the day is done.
    assert.equal(await runRetention({ ...options(now, { db: replica() }), skipDay: '2026-11-28' }), undefined);
    // Two at once: exactly one runs.
    const next = new Date('2026-11-29T03:00:00.000Z');
    const both = await Promise.all([1, 2].map(() => runRetention({ ...options(next, { db: replica() }), skipDay: '2026-11-29' })));
    assert.equal(both.filter((r) => r !== undefined).length, 1);
    assert.deepEqual(await keys('retention_runs', 'day').then((d) => d.length), 2);
  });

  it('a run that fails half-way keeps whole batches removed, records no day, and the next attempt finishes', async () => {
    const now = new Date('2026-11-28T03:00:00.000Z');
    const t = now.getTime();
    const seed = retentionSeed(db, 'acme');
    await seed.tenant();
    await seed.idempotencyKey('expired', t - 1);
    await seed.revocation('gone', t - 1);
    const failing: RetentionRule = {
      name: 'failing',
      active: true,
      cutoff: (n) => n,
      remove: async () => {
        throw new Error('connection lost');
      },
    };
    const [keysRule, , revocationsRule] = RETENTION_RULES;
    await assert.rejects(runRetention({ ...options(now, { rules: [keysRule!, failing, revocationsRule!] }), skipDay: '2026-11-28' }), /connection lost/);
    assert.deepEqual(await keys('idempotency_keys', 'key'), []);
    assert.deepEqual(await keys('token_revocations', 'subject'), ['gone']);
    assert.equal((await db('retention_runs')).length, 0);
    const again = await runRetention({ ...options(now), skipDay: '2026-11-28' });
    assert.equal(again?.deleted.token_revocations, 1);
    assert.deepEqual(await keys('token_revocations', 'subject'), []);
  });

  it("removes an erased user's earlier versions once RETENTION_ERASED_USER_YEARS have passed, keeping the last", async () => {
    const now = new Date('2026-11-28T03:00:00.000Z');
    if (!(await db('tenants').where({ id: 'erasures' }).first())) await db('tenants').insert({ id: 'erasures', name: 'Erasures' });
    const user = async (id: string, erasedAt: string) => {
      await db.transaction(async (trx) => {
        await trx.raw(`select set_config('app.tenant_id', 'erasures', true)`);
        const at = new Date(erasedAt);
        const row = { tenant_id: 'erasures', id, type: 'users', version: 3, doc: { first_name: null }, deleted: true, created_at: at, version_at: at };
        await trx('entities').insert(row);
        for (const version of [1, 2, 3])
          await trx('entity_versions').insert({ tenant_id: 'erasures', id, version, doc: { first_name: null }, deleted: version === 3, version_at: at });
        await trx('user_erasures').insert({ tenant_id: 'erasures', user_id: id, erased_at: at });
      });
    };
    await user('UOLD', '2016-11-27T03:00:00.000Z');
    await user('UNEW', '2016-11-29T03:00:00.000Z');
    const run = await runRetention(options(now));
    assert.equal(run?.deleted.erased_user_versions, 2);
    const versions = await db('entity_versions').select('id', 'version').where({ tenant_id: 'erasures' }).orderBy(['id', 'version']);
    assert.deepEqual(
      versions.map((v) => `${v.id}:${v.version}`),
      ['UNEW:1', 'UNEW:2', 'UNEW:3', 'UOLD:3'],
    );
  });
});
