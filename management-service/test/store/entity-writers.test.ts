import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '@platform/test-support/database';
import { DuplicateValue } from '../../src/domain/errors.ts';
import type { Doc } from '../../src/domain/merge.ts';
import { firstVersion, insertEntities, nextVersion, updateEntities, type EntityRow } from '../../src/store/entities.ts';

const TENANT = 'writers-a';
const access = (who: string) => ({ readable_by: [who], modifiable_by: [who] });
const row = (id: string, doc: Doc, now = '2026-01-02T03:04:05.678Z') =>
  firstVersion({ tenantId: TENANT, type: 'optimizations', id, parentId: 'P1', doc, access: access('U1'), now, author: null });

describe('version builders of entities', () => {
  it('makes version 1 created and versioned at the same instant, not deleted', () => {
    const first = row('O1', { status: 'PENDING' });
    assert.deepEqual(
      [first.version, first.deleted, first.created_at.toISOString(), first.version_at.toISOString(), first.parent_id, first.readable_by],
      [1, false, '2026-01-02T03:04:05.678Z', '2026-01-02T03:04:05.678Z', 'P1', ['U1']],
    );
  });

  it('makes the next version: bumped, stamped, access and deletion as given or as they were', () => {
    const first = row('O1', { status: 'PENDING' });
    const kept = nextVersion(first, { status: 'SUCCESS' }, { now: '2026-01-03T00:00:00.000Z', author: 'U2' });
    assert.deepEqual(
      [kept.version, kept.doc, kept.deleted, kept.readable_by, kept.modifiable_by, kept.version_at.toISOString(), kept.version_author_id],
      [2, { status: 'SUCCESS' }, false, ['U1'], ['U1'], '2026-01-03T00:00:00.000Z', 'U2'],
    );
    assert.equal(kept.created_at, first.created_at);
    const moved = nextVersion(kept, kept.doc, { now: '2026-01-04T00:00:00.000Z', author: null, deleted: true, access: access('U3') });
    assert.deepEqual([moved.version, moved.deleted, moved.readable_by, moved.modifiable_by], [3, true, ['U3'], ['U3']]);
  });
});

describe('batched writers of entities', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  const stored = () => database.db('entities').where({ tenant_id: TENANT }).orderBy('id').select('id', 'type', 'version', 'doc');
  const versions = () => database.db('entity_versions').where({ tenant_id: TENANT }).orderBy(['id', 'version']).select('id', 'version', 'doc');
  const write = (work: (trx: Parameters<typeof insertEntities>[0]) => Promise<void>) => database.db.transaction(work);

  before(async () => {
    database = await createTestDatabase();
    await database.db('tenants').insert({ id: TENANT, name: 'Writers' });
  });
  after(async () => database?.drop());

  it('inserts a batch as version 1 of its type with its first versions, and moves it on, one version row each', async () => {
    const rows = [row('O1', { n: 1 }), row('O2', { n: 2 })];
    await write((trx) => insertEntities(trx, TENANT, 'optimizations', rows));
    assert.deepEqual(await stored(), [
      { id: 'O1', type: 'optimizations', version: 1, doc: { n: 1 } },
      { id: 'O2', type: 'optimizations', version: 1, doc: { n: 2 } },
    ]);
    const now = '2026-01-05T00:00:00.000Z';
    await write((trx) => updateEntities(trx, TENANT, 'optimizations', [nextVersion(rows[0]!, { n: 10 }, { now, author: null })]));
    assert.deepEqual(
      (await stored()).map((r) => [r.id, r.version, r.doc]),
      [
        ['O1', 2, { n: 10 }],
        ['O2', 1, { n: 2 }],
      ],
    );
    assert.deepEqual(
      (await versions()).map((v) => [v.id, v.version, v.doc]),
      [
        ['O1', 1, { n: 1 }],
        ['O1', 2, { n: 10 }],
        ['O2', 1, { n: 2 }],
      ],
    );
  });

  it('leaves alone a row whose stored version is not the one before, and one of another type', async () => {
    const before = { entities: await stored(), versions: await versions() };
    const now = '2026-01-06T00:00:00.000Z';
    const stale: EntityRow = { ...row('O2', { n: 2 }), version: 5 };
    await write((trx) => updateEntities(trx, TENANT, 'optimizations', [nextVersion(stale, { n: 99 }, { now, author: null })]));
    await write((trx) => updateEntities(trx, TENANT, 'portfolios', [nextVersion(row('O2', { n: 2 }), { n: 98 }, { now, author: null })]));
    assert.deepEqual({ entities: await stored(), versions: await versions() }, before);
  });

  it('refuses a taken external_id as a duplicate value and writes nothing of the batch', async () => {
    await write((trx) => insertEntities(trx, TENANT, 'optimizations', [row('O3', { external_id: 'ext-1' })]));
    const before = { entities: await stored(), versions: await versions() };
    const batch = write((trx) => insertEntities(trx, TENANT, 'optimizations', [row('O4', { n: 4 }), row('O5', { external_id: 'ext-1' })]));
    await assert.rejects(batch, (error) => error instanceof DuplicateValue && error.field === 'external_id');
    assert.deepEqual({ entities: await stored(), versions: await versions() }, before);
  });
});
