import assert from 'node:assert/strict';
import { connectNats, jetstreamManager, streams, subjects, type NatsConnection } from '@platform/shared';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { eventsSettled, testNatsUrl } from '@platform/test-support/database';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { inTenant } from '../../src/store/tenant-scope.ts';
import { eventsAfter, insertEvents } from '../../src/store/outbox.ts';
import { deletePublishedOutbox } from '../../src/store/retention.ts';
import { envelope } from '../../src/domain/events.ts';

type Envelope = { id: string; created: string; version: string; subject: string; action: string; data: Record<string, unknown> };
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('outbound events', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let api: Api;
  let tenantId: string;
  let owner: { id: string };
  let policy: string;
  let cursor = '';

  /** Events since the last call, through GET /events/. */
  const poll = async (): Promise<Envelope[]> => {
    const res = await api('GET', `/events/${cursor ? `?after=${cursor}` : ''}`);
    assert.equal(res.status, 200, res.text);
    cursor = res.body.next_cursor;
    return res.body.results;
  };
  const names = (events: Envelope[]) => events.map((e) => `${e.subject}.${e.action}`);

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    tenantId = tenant.tenantId;
    api = await machineApi(platform, tenant);
    owner = (await api('POST', '/users/', build.user({ external_id: 'crm-7' }))).body;
    policy = (await api('POST', '/policies/', build.policy())).body.id;
    await poll();
  });
  after(() => platform.stop());

  it('emits portfolios.creation with the envelope and data of the catalogue', async () => {
    const p = (await api('POST', '/portfolios/', build.roboPortfolio(owner.id, { policy_id: policy }, { external_id: 'pf-1' }))).body;
    const [event, ...rest] = await poll();
    assert.equal(rest.length, 0);
    assert.match(event!.id, ULID);
    assert.match(event!.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(
      { ...event, id: undefined, created: undefined },
      {
        id: undefined,
        created: undefined,
        version: '1.0.0',
        subject: 'portfolios',
        action: 'creation',
        data: { id: p.id, external_id: 'pf-1', owned_by_user_id: owner.id, owned_by_external_user_id: 'crm-7' },
      },
    );
  });

  it('emits portfolios.status-update on every change of the derived status, and only then', async () => {
    const p = (await api('POST', '/portfolios/', build.roboPortfolio(owner.id, { policy_id: policy }))).body;
    assert.equal(p.status, 'WAITING_FOR_FUNDS');
    await poll();
    await api('PATCH', `/portfolios/${p.id}`, { name: 'renamed' });
    assert.deepEqual(await poll(), []);
    await api('PATCH', `/portfolios/${p.id}`, { funded_since: '2026-01-01T00:00:00.000Z' });
    await api('PATCH', `/portfolios/${p.id}`, { config: { manager_settings: { active: false } } });
    const events = await poll();
    assert.deepEqual(names(events), ['portfolios.status-update', 'portfolios.status-update']);
    assert.deepEqual(
      events.map((e) => e.data.value),
      ['ACTIVE', 'INACTIVE'],
    );
    assert.deepEqual(Object.keys(events[0]!.data).sort(), ['external_id', 'id', 'owned_by_external_user_id', 'owned_by_user_id', 'value']);
  });

  it('emits the withdrawal request (total amount) and, when cash covers it, cash-available-for-withdrawal', async () => {
    const p = (await api('POST', '/portfolios/', build.roboPortfolio(owner.id, { policy_id: policy }, { portfolio: { $EUR: 300 } }))).body;
    await poll();
    await api('PATCH', `/portfolios/${p.id}`, { config: { manager_settings: { divest_amount: 500 } } });
    let events = await poll();
    assert.deepEqual(names(events), ['portfolios.divest-amount-update']);
    assert.deepEqual(events[0]!.data, {
      id: p.id,
      external_id: null,
      divest_amount: 500,
      currency: 'EUR',
      owned_by_user_id: owner.id,
      owned_by_external_user_id: 'crm-7',
    });
    await api('PATCH', `/portfolios/${p.id}`, { portfolio: { $EUR: 650.5 } });
    events = await poll();
    assert.deepEqual(names(events), ['portfolios.cash-available-for-withdrawal']);
    assert.deepEqual(events[0]!.data, { id: p.id, external_id: null, currency: 'EUR', owned_by_user_id: owner.id, owned_by_external_user_id: 'crm-7' });
    await api('PATCH', `/portfolios/${p.id}`, { config: { manager_settings: { divest_amount: 0 } } });
    events = await poll();
    assert.deepEqual(names(events), ['portfolios.divest-amount-update']);
    assert.equal(events[0]!.data.divest_amount, 0);
  });

  it('emits profile-created-for-portfolio and profile-updated-for-portfolio', async () => {
    const p = (await api('POST', '/portfolios/', build.roboPortfolio(owner.id, { policy_id: policy }))).body;
    const q = (await api('POST', '/suitability-profiler/questionnaires/', { name: 'q', questions: [{ id: 'q1', text: { en: 'q' }, type: 'BOOLEAN' }] })).body;
    await poll();
    const profile = (await api('POST', '/suitability-profiler/profiles/', { user_id: owner.id, questionnaire_id: q.id, portfolio_id: p.id })).body;
    await api('PATCH', `/suitability-profiler/profiles/${profile.id}/`, { external_id: 'prof-1' });
    const events = await poll();
    assert.deepEqual(names(events), ['portfolios.profile-created-for-portfolio', 'portfolios.profile-updated-for-portfolio']);
    assert.deepEqual(events[0]!.data, {
      id: p.id,
      external_id: null,
      owned_by_user_id: owner.id,
      owned_by_external_user_id: 'crm-7',
      suitability_profile_id: profile.id,
    });
  });

  it('publishes every event to JetStream on the tenant subject with Nats-Msg-Id = event id', async () => {
    const nc: NatsConnection = await connectNats(testNatsUrl(), 'events-test');
    try {
      const p = (await api('POST', '/portfolios/', build.portfolio(owner.id))).body;
      const [created] = (await poll()).filter((e) => e.data.id === p.id);
      const jsm = await jetstreamManager(nc);
      let found: { subject: string; header?: string; data: Envelope } | undefined;
      for (let i = 0; i < 50 && !found; i++) {
        try {
          const msg = await jsm.streams.getMessage(streams.tenantEvents.name, { last_by_subj: subjects.tenantEvents(tenantId) });
          const data = msg!.json<Envelope>();
          if (data.id === created!.id) found = { subject: msg!.subject, header: msg!.header.get('Nats-Msg-Id'), data };
        } catch {
          /* not published yet */
        }
        if (!found) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(found, 'the event reached JetStream');
      assert.equal(found.subject, `tenants.${tenantId}.events`);
      assert.equal(found.header, created!.id);
      assert.deepEqual(found.data, created);
    } finally {
      await nc.close();
    }
  });

  it('never skips an event whose transaction commits late: the cursor waits for it', async () => {
    const db = platform.database.db;
    await poll();
    let releaseFirst!: () => void;
    const firstMayCommit = new Promise<void>((r) => (releaseFirst = r));
    let firstWrote!: () => void;
    const firstHasWritten = new Promise<void>((r) => (firstWrote = r));
    const now = new Date().toISOString();
    const first = inTenant(db, tenantId, async (trx) => {
      await insertEvents(trx, tenantId, [envelope('portfolios', 'creation', { id: 'first' }, now, 'P-first')]);
      firstWrote();
      await firstMayCommit;
    });
    await firstHasWritten;
    await inTenant(db, tenantId, (trx) => insertEvents(trx, tenantId, [envelope('portfolios', 'creation', { id: 'second' }, now, 'P-second')]));
    assert.deepEqual(await poll(), [], 'the second, committed, waits behind the first, still open');
    const held = cursor;
    releaseFirst();
    await first;
    const events = await poll();
    assert.deepEqual(
      events.map((e) => e.data.id),
      ['first', 'second'],
    );
    assert.notEqual(cursor, held);
    assert.deepEqual(await poll(), []);
  });

  it('refuses a cursor it did not hand out (400) and filters by subject', async () => {
    assertProblem(await api('GET', '/events/?after=yesterday'), 400, 'invalid_parameter');
    const res = await api('GET', '/events/?subject=optimizations&limit=5');
    assert.deepEqual(res.body.results, []);
    assert.equal(res.body.next_cursor, '0-0');
  });

  it("gives the events about one entity, of any subject, none about another tenant's, and refuses an id of another form", async () => {
    const a = (await api('POST', '/portfolios/', build.roboPortfolio(owner.id, { policy_id: policy }))).body;
    const b = (await api('POST', '/portfolios/', build.roboPortfolio(owner.id, { policy_id: policy }))).body;
    const now = new Date().toISOString();
    await inTenant(platform.database.db, tenantId, (trx) =>
      insertEvents(trx, tenantId, [envelope('notifications', 'deposit-received', { id: a.id, amount: '10.00', currency: 'EUR' }, now, a.id)]),
    );
    // The feed hands out what no running transaction can still precede (docs/adr/0002-event-feed-cursor.md):
    // the relay publishing these events holds one open meanwhile.
    await eventsSettled(platform.database.db);
    const about = async (query: string) => {
      const res = await api('GET', `/events/?${query}`);
      assert.equal(res.status, 200, res.text);
      return (res.body.results as Envelope[]).map((e) => `${e.subject}.${e.action} ${e.data.id}`);
    };
    assert.deepEqual(await about(`entity_id=${a.id}`), [`portfolios.creation ${a.id}`, `notifications.deposit-received ${a.id}`]);
    assert.deepEqual(await about(`entity_id=${b.id}`), [`portfolios.creation ${b.id}`]);
    assert.deepEqual(await about(`entity_id=${a.id}&subject=notifications`), [`notifications.deposit-received ${a.id}`]);
    const other = await machineApi(platform, await platform.tenant());
    const theirs = await other('GET', `/events/?entity_id=${a.id}`);
    assert.equal(theirs.status, 200);
    assert.deepEqual(theirs.body.results, []);
    for (const id of ['P1', `${a.id}x`, a.id.toLowerCase(), "P' or 1=1 --"]) {
      assertProblem(await api('GET', `/events/?entity_id=${encodeURIComponent(id)}`), 400, 'invalid_parameter');
    }
  });

  it('reads the events of one entity through their index (migrations/016), under row-level security', async () => {
    const db = platform.database.db;
    // A tenant's feed of many entities, each with a few events, as the statistics see it.
    const now = new Date().toISOString();
    const many = Array.from({ length: 5000 }, (_, i) => envelope('portfolios', 'creation', { id: `P${i}` }, now, `P${i % 1000}`));
    await inTenant(db, tenantId, (trx) => insertEvents(trx, tenantId, many));
    await db.raw('analyze outbox');
    const sent: { sql: string; bindings: unknown[] }[] = [];
    const listen = (q: { sql: string; bindings: unknown[] }) => sent.push(q);
    db.on('query', listen);
    const plan = await inTenant(db, tenantId, async (trx) => {
      await eventsAfter(trx, tenantId, { xid: '1', seq: '1' }, 100, { entityId: 'P01JP9ZMQCN0XG3YNRRKJ6T0FZ3' });
      // The statement as sent ($1, $2, …), given to knex again with its bindings (?, ?, …).
      const { sql, bindings } = sent.find((q) => q.sql.includes('entity_id'))!;
      await trx.raw('set local enable_seqscan = off');
      const { rows } = await trx.raw(`explain ${sql.replace(/\$\d+/g, '?')}`, bindings as readonly string[]);
      return rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
    });
    db.off('query', listen);
    assert.match(plan, /outbox_tenant_entity_order/, plan);
  });
});

describe('outbox retention', () => {
  it('prunes published events older than the retention, never unpublished or recent ones', async () => {
    const platform = await startTestPlatform({ OUTBOX_RELAY: 'false' });
    try {
      const { tenantId } = await platform.tenant();
      const db = platform.database.db;
      const now = new Date().toISOString();
      await inTenant(db, tenantId, (trx) =>
        insertEvents(
          trx,
          tenantId,
          ['old', 'recent', 'unpublished'].map((id) => envelope('portfolios', 'creation', { id }, now, id)),
        ),
      );
      await db.raw(`update outbox set published_at = now(), created_at = now() - interval '10 days' where envelope -> 'data' ->> 'id' = 'old'`);
      await db.raw(`update outbox set published_at = now() where envelope -> 'data' ->> 'id' = 'recent'`);
      await db.raw(`update outbox set created_at = now() - interval '10 days' where envelope -> 'data' ->> 'id' = 'unpublished'`);
      assert.equal(await deletePublishedOutbox(db, new Date(Date.now() - 7 * 86_400_000), 100), 1);
      const left = (await db('outbox').select(db.raw("envelope -> 'data' ->> 'id' as id")).orderBy('seq')).map((r: { id: string }) => r.id);
      assert.deepEqual(left, ['recent', 'unpublished']);
    } finally {
      await platform.stop();
    }
  });
});
