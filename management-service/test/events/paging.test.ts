import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Knex } from 'knex';
import { newUlid } from '@platform/shared';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

type Page = { results: { id: string }[]; next_cursor: string };

/** Every event GET /events/ hands out from the start, `limit` at a time, and the final cursor. */
async function pageAll(api: Api, limit: number): Promise<{ ids: string[]; cursor: string }> {
  const ids: string[] = [];
  let cursor = '';
  for (;;) {
    const res = await api('GET', `/events/?limit=${limit}${cursor ? `&after=${cursor}` : ''}`);
    assert.equal(res.status, 200, res.text);
    const page = res.body as Page;
    ids.push(...page.results.map((e) => e.id));
    if (page.results.length === 0) return { ids, cursor: page.next_cursor };
    cursor = page.next_cursor;
  }
}

/** The tenant's events as the outbox holds them, in commit order (writing transaction, then row). */
async function outboxOrder(db: Knex, tenantId: string): Promise<string[]> {
  const { rows } = await db.raw(`select event_id from outbox where tenant_id = ? and nats_subject is null order by xid, seq`, [tenantId]);
  return rows.map((r: { event_id: string }) => r.event_id);
}

async function currentXid(db: Knex): Promise<number> {
  const { rows } = await db.raw('select pg_current_xact_id()::text as xid');
  return Number(rows[0].xid);
}

/**
 * Moves the cluster's transaction counter to just below `target`: each subtransaction that writes
 * takes a transaction id of its own, so one DO block spends thousands of ids in a second.
 */
async function advanceXidTo(db: Knex, target: number): Promise<void> {
  const spend = target - (await currentXid(db)) - 2;
  if (spend <= 0) return;
  await db.transaction(async (trx) => {
    await trx.raw('create temp table xid_spender (n int) on commit drop');
    await trx.raw(`do $$ begin for i in 1..${spend} loop begin insert into xid_spender values (i); exception when others then null; end; end loop; end $$`);
  });
}

describe('GET /events/ paging never skips or repeats an event', function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let db: Knex;

  before(async () => {
    platform = await startTestPlatform();
    db = platform.database.db;
  });
  after(() => platform.stop());

  it('across transaction ids of more digits (999 → 1000, 9999 → 10000, 99999 → 100000), with any page size', async () => {
    const tenant = await platform.tenant();
    const api = await machineApi(platform, tenant);
    const owner = (await api('POST', '/users/', build.user())).body;
    const boundaries = [1_000, 10_000, 100_000];
    let crossed = 0;
    for (const boundary of boundaries) {
      if ((await currentXid(db)) > boundary - 5) continue;
      await advanceXidTo(db, boundary - 3);
      const before = await currentXid(db);
      // One transaction per request: their events straddle the boundary.
      for (let i = 0; i < 6; i++) await api('POST', '/portfolios/', build.portfolio(owner.id, { name: `p${boundary}-${i}` }));
      const { rows } = await db.raw(
        `select count(*)::int as below, (select count(*)::int from outbox where tenant_id = ? and xid >= ?::xid8) as above from outbox where tenant_id = ? and xid < ?::xid8`,
        [tenant.tenantId, String(boundary), tenant.tenantId, String(boundary)],
      );
      assert.ok(before < boundary && rows[0].below > 0 && rows[0].above > 0, `events on both sides of ${boundary}`);
      crossed++;
    }
    assert.ok(crossed >= 1, 'at least one digit boundary crossed by real transactions');
    const expected = await outboxOrder(db, tenant.tenantId);
    assert.ok(expected.length >= 6 * crossed);
    for (const limit of [1, 2, 3, 5, 7, 1000]) {
      const { ids, cursor } = await pageAll(api, limit);
      assert.deepEqual(ids, expected, `limit ${limit}: every event once, in commit order`);
      const again = await api('GET', `/events/?after=${cursor}`);
      assert.deepEqual(again.body, { results: [], next_cursor: cursor }, 'nothing after the last cursor, which stays put');
    }
  });

  it('property: for any transaction ids and any limit, paging returns exactly the outbox rows in commit order, once each', async () => {
    const tenant = await platform.tenant();
    const api = await machineApi(platform, tenant);
    await advanceXidTo(db, 100_050);
    const top = (await currentXid(db)) - 1;
    // Ids near every digit boundary below the counter, and anywhere below it.
    const near = [9, 10, 99, 100, 999, 1_000, 9_999, 10_000, 99_999, 100_000].filter((b) => b < top);
    const xidArb = fc.oneof(
      fc.constantFrom(...near).chain((b) => fc.integer({ min: Math.max(3, b - 2), max: Math.min(top, b + 2) })),
      fc.integer({ min: 3, max: top }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(xidArb, { minLength: 0, maxLength: 40 }), fc.integer({ min: 1, max: 12 }), async (xids, limit) => {
        await db('outbox').where('tenant_id', tenant.tenantId).delete();
        const created = new Date().toISOString();
        // Written as committed rows of those transactions (published already, so the relay leaves them).
        const rows = xids.map((xid) => {
          const id = newUlid();
          return {
            tenant_id: tenant.tenantId,
            event_id: id,
            entity_id: 'P',
            subject: 'portfolios',
            action: 'creation',
            envelope: { id, created, version: '1.0.0', subject: 'portfolios', action: 'creation', data: {} },
            created_at: created,
            xid: String(xid),
            published_at: created,
          };
        });
        if (rows.length > 0) await db('outbox').insert(rows);
        const expected = await outboxOrder(db, tenant.tenantId);
        assert.equal(expected.length, xids.length);
        const { ids } = await pageAll(api, limit);
        assert.deepEqual(ids, expected);
      }),
      { numRuns: 40, seed: 20261123 },
    );
  });
});
