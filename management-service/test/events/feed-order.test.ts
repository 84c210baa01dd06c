import assert from 'node:assert/strict';
import knex, { type Knex } from 'knex';
import { createTestDatabase, eventsSettled, type TestDatabase } from '@platform/test-support/database';
import { createTenant } from '../../src/admin/provisioning.ts';
import { envelope } from '../../src/domain/events.ts';
import { eventsAfter, insertEvents, type Cursor } from '../../src/store/outbox.ts';
import { inTenant } from '../../src/store/tenant-scope.ts';

/** A promise and the function that settles it: one step of a scripted interleaving. */
function signal(): { done: () => void; reached: Promise<void> } {
  let done!: () => void;
  const reached = new Promise<void>((resolve) => (done = resolve));
  return { done, reached };
}

/**
 * The feed hands out an entity's changes in the order they committed, whichever transaction took
 * its transaction id first (docs/adr/0002-event-feed-cursor.md). A request writes before it locks
 * the entity it changes (its Idempotency-Key is claimed first), so a transaction can hold an older
 * id than one that changed the same entity and committed before it.
 */
describe('GET /events/ order of one entity under concurrent writes', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let db: Knex;
  before(async () => {
    database = await createTestDatabase();
    db = database.db;
  });
  after(() => database?.drop());

  const now = () => new Date().toISOString();
  /** Locks the entity as the flows do (its row, for update), then writes one change of it. */
  async function change(trx: Knex.Transaction, tenantId: string, entity: string, label: string): Promise<void> {
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`${tenantId}/${entity}`]);
    await insertEvents(trx, tenantId, [envelope('portfolios', 'status-update', { id: entity, label }, now(), entity)]);
  }

  /** The whole feed of the tenant, `limit` at a time, as the labels of its changes. */
  async function feed(tenantId: string, limit: number, entityId?: string): Promise<string[]> {
    const labels: string[] = [];
    let after: Cursor | undefined;
    for (;;) {
      const page = await inTenant(db, tenantId, (trx) => eventsAfter(trx, tenantId, after, limit, entityId ? { entityId } : {}));
      if (page.length === 0) return labels;
      labels.push(...page.map((e) => String(e.envelope.data.label)));
      after = page.at(-1)!;
    }
  }

  it('a change that took its transaction id first but committed second comes second', async () => {
    const tenantId = 'feed-order-a';
    await createTenant(db, { id: tenantId });
    await inTenant(db, tenantId, (trx) => change(trx, tenantId, 'P', 'created'));
    const firstHasId = signal();
    const secondCommitted = signal();
    const first = inTenant(db, tenantId, async (trx) => {
      // Its first write, as a request's key claim: the transaction id is taken here.
      await trx.raw('select pg_current_xact_id()');
      firstHasId.done();
      await secondCommitted.reached;
      await change(trx, tenantId, 'P', 'deposit');
    });
    await firstHasId.reached;
    await inTenant(db, tenantId, (trx) => change(trx, tenantId, 'P', 'patch'));
    secondCommitted.done();
    await first;
    await eventsSettled(db);

    const { rows } = await db.raw(`select envelope->'data'->>'label' as label from outbox where tenant_id = ? order by seq`, [tenantId]);
    assert.deepEqual(
      rows.map((r: { label: string }) => r.label),
      ['created', 'patch', 'deposit'],
      'the outbox (and the stream) in commit order',
    );
    for (const limit of [1, 2, 100]) {
      assert.deepEqual(await feed(tenantId, limit), ['created', 'patch', 'deposit'], `the feed in commit order, ${limit} at a time`);
      assert.deepEqual(await feed(tenantId, limit, 'P'), ['created', 'patch', 'deposit'], `the entity's events in commit order, ${limit} at a time`);
    }
  });

  it('a chain of such transactions over several entities: each entity in commit order, every event once', async () => {
    const tenantId = 'feed-order-b';
    await createTenant(db, { id: tenantId });
    // Transaction i takes its id once i - 1 holds one, waits for i + 1 to commit, then changes
    // entity i % 3: ids taken in one order, commits made in the reverse one, entities shared.
    const count = 6;
    const pool = knex({ client: 'pg', connection: database.url, pool: { min: 0, max: count } });
    const committed = Array.from({ length: count }, signal);
    const runs: Promise<void>[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const hasId = signal();
        runs.push(
          inTenant(pool, tenantId, async (trx) => {
            await trx.raw('select pg_current_xact_id()');
            hasId.done();
            if (i + 1 < count) await committed[i + 1]!.reached;
            await change(trx, tenantId, `E${i % 3}`, `t${i}`);
          }).then(() => committed[i]!.done()),
        );
        await hasId.reached;
      }
      await Promise.all(runs);
    } finally {
      await pool.destroy();
    }
    await eventsSettled(db);

    const commitOrder = Array.from({ length: count }, (_, i) => `t${count - 1 - i}`);
    for (const limit of [1, 4, 100]) {
      const all = await feed(tenantId, limit);
      assert.deepEqual([...all].sort(), [...commitOrder].sort(), `every event once, ${limit} at a time`);
      for (const entity of ['E0', 'E1', 'E2']) {
        const ofEntity = commitOrder.filter((label) => Number(label.slice(1)) % 3 === Number(entity.slice(1)));
        assert.deepEqual(
          all.filter((label) => ofEntity.includes(label)),
          ofEntity,
          `${entity} in commit order in the tenant's feed, ${limit} at a time`,
        );
        assert.deepEqual(await feed(tenantId, limit, entity), ofEntity, `${entity} alone in commit order, ${limit} at a time`);
      }
    }
  });
});
