import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { createLogger } from '@platform/shared';
import { eventsSettled } from '@platform/test-support/database';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { runRetention } from '../../src/jobs/retention.ts';

type Page = { results: { id: string }[]; next_cursor: string };

/** GET /events/ once the outbox's published rows past OUTBOX_RETENTION_DAYS are removed (docs/adr/0061-retention.md). */
describe('GET /events/ after the retention', function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let db: Knex;
  let tenant: TestTenant;
  let api: Api;
  const logger = createLogger('test', 'error');

  before(async () => {
    platform = await startTestPlatform();
    db = platform.database.db;
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
  });
  after(() => platform?.stop());

  const page = async (after?: string) => {
    const res = await api('GET', `/events/?limit=100${after === undefined ? '' : `&after=${after}`}`);
    return { status: res.status, body: res.body as Page & Record<string, unknown>, type: res.headers.get('content-type') };
  };
  const outbox = async () =>
    (await db('outbox').where({ tenant_id: tenant.tenantId }).whereNull('nats_subject').orderByRaw('xid, seq').select('event_id')).map((r) => r.event_id);
  const horizon = async () =>
    db('outbox_retention_horizons').where({ tenant_id: tenant.tenantId }).select(db.raw("xid::text || '-' || seq::text as at")).first();

  it('starts at the oldest kept event, continues from a cursor at or after the last removed one, and refuses an older cursor', async () => {
    const owner = (await api('POST', '/users/', build.user())).body as { id: string };
    for (let i = 0; i < 5; i++) assert.equal((await api('POST', '/portfolios/', build.portfolio(owner.id, { name: `p${i}` }))).status, 201);
    await eventsSettled(db);
    const all = await outbox();
    assert.equal(all.length, 5);
    // The cursors a client held after each event, read before anything is removed.
    const cursors: string[] = [];
    for (let after: string | undefined; cursors.length < all.length;) {
      const res = await api('GET', `/events/?limit=1${after ? `&after=${after}` : ''}`);
      after = (res.body as Page).next_cursor;
      cursors.push(after);
    }
    const emptyStart = (await page('0-0')).body.results.map((e) => e.id);
    assert.deepEqual(emptyStart, all, 'before any removal, 0-0 reads every event');

    // The first three are old and published, the fourth old but not published yet, the last recent.
    const old = new Date(Date.now() - 40 * 86_400_000);
    await db('outbox').whereIn('event_id', all.slice(0, 3)).update({ created_at: old, published_at: old });
    await db('outbox').whereIn('event_id', all.slice(3, 4)).update({ created_at: old, published_at: null });
    const run = await runRetention({ db, logger, settings: { outboxDays: 30, erasedUserYears: 10 }, batch: 2 });
    assert.equal(run?.deleted.outbox_published, 3);
    assert.deepEqual(await outbox(), all.slice(3));
    assert.equal((await horizon())?.at, cursors[2], 'the horizon is the place of the last removed event');

    // Without a cursor: from the oldest kept event.
    assert.deepEqual(
      (await page()).body.results.map((e) => e.id),
      all.slice(3),
    );
    // The cursor of the last removed event (a client that read it) and a later one go on as before.
    assert.deepEqual(
      (await page(cursors[2])).body.results.map((e) => e.id),
      all.slice(3),
    );
    assert.deepEqual(
      (await page(cursors[3])).body.results.map((e) => e.id),
      all.slice(4),
    );

    // A cursor before removed events: a 400 naming the parameter, not a page that skips them silently.
    for (const stale of ['0-0', cursors[0]!, cursors[1]!]) {
      const refused = await page(stale);
      assert.equal(refused.status, 400, stale);
      assert.match(refused.type ?? '', /application\/problem\+json/);
      assert.equal(refused.body.code, 'invalid_parameter');
      assert.deepEqual((refused.body.errors as { loc: string[] }[])[0]!.loc, ['query', 'after']);
      assert.match(String(refused.body.detail), /no longer keeps.*omit it/);
      assert.doesNotMatch(JSON.stringify(refused.body), /outbox|horizon|select|xid8/i);
    }
    // The refusals changed nothing.
    assert.deepEqual(await outbox(), all.slice(3));
    assert.equal((await horizon())?.at, cursors[2]);
  });
});
