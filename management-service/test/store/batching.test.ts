import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '@platform/test-support/database';
import { createDb, type Db } from '../../src/store/db.ts';
import { deferred } from '../../src/store/deferred.ts';
import { insertEntity } from '../../src/store/entities.ts';
import { inTenant, readInTenant } from '../../src/store/tenant-scope.ts';

/** A user entity of the tenant whose doc names what the work was given (written as the tenant role may). */
const note = (trx: Parameters<typeof insertEntity>[0], tenantId: string, id: string, text: string) =>
  insertEntity(trx, {
    tenant_id: tenantId,
    id,
    type: 'users',
    parent_id: null,
    version: 1,
    doc: { note: text },
    deleted: false,
    readable_by: [],
    modifiable_by: [],
    created_at: new Date(),
    version_at: new Date(),
    version_author_id: null,
  });

// docs/adr/0031-http-hot-path.md: the service's connections send BEGIN, a tenant's scope and
// statements nobody waits for together with the next statement; what each transaction means stays.

describe('batching connections of the management service', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let db: Db;
  const tenants = () => database.db('tenants').orderBy('id').pluck('id');
  const notes = (tenantId: string) =>
    database.db('entities').where({ tenant_id: tenantId }).orderBy('id').select('id', database.db.raw(`doc->>'note' as note`));

  before(async () => {
    database = await createTestDatabase();
    // One connection: whatever a transaction leaves behind meets the next one.
    db = createDb(database.url, 1);
    await database.db('tenants').insert([
      { id: 'batch-a', name: 'A' },
      { id: 'batch-b', name: 'B' },
    ]);
  });
  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('commits a deferred statement with the transaction, and rolls the whole transaction back when it fails', async () => {
    await db.transaction(async (trx) => {
      await trx('tenants').insert({ id: 'batch-c', name: 'C' });
      await deferred(trx, trx('tenants').insert({ id: 'batch-d', name: 'D' }));
    });
    assert.deepEqual(await tenants(), ['batch-a', 'batch-b', 'batch-c', 'batch-d']);

    const failed = db.transaction(async (trx) => {
      await trx('tenants').insert({ id: 'batch-e', name: 'E' });
      await deferred(trx, trx('tenants').insert({ id: 'batch-a', name: 'taken' }));
    });
    await assert.rejects(failed, (error: { code?: string }) => error.code === '23505');
    assert.deepEqual(await tenants(), ['batch-a', 'batch-b', 'batch-c', 'batch-d'], 'nothing of the failed transaction stays');
    // The one connection is out of its aborted transaction.
    assert.equal((await db.transaction((trx) => trx.raw('select 1 as one'))).rows[0].one, 1);
  });

  it('fails a tenant transaction with what a deferred statement says its failure means, at the COMMIT or the next statement, and keeps nothing', async () => {
    class Taken extends Error {}
    const taken = (error: Error) => ((error as { code?: string }).code === '23505' ? new Taken('the id is taken') : undefined);
    await inTenant(db, 'batch-a', (trx) => note(trx, 'batch-a', 'U-taken', 'first'));
    // A copy of an existing row: a unique violation.
    const COLUMNS = 'tenant_id, id, type, parent_id, version, doc, deleted, readable_by, modifiable_by, created_at, version_at, version_author_id';
    const copy = (trx: Parameters<typeof deferred>[0]) =>
      deferred(trx, trx.raw(`insert into entities (${COLUMNS}) select ${COLUMNS} from entities where tenant_id = 'batch-a' and id = 'U-taken'`), taken);
    const meant = (error: unknown) => error instanceof Taken && error.message === 'the id is taken';
    await assert.rejects(
      inTenant(db, 'batch-a', async (trx) => {
        await note(trx, 'batch-a', 'U-commit', 'before the copy');
        await copy(trx);
      }),
      meant,
      'found at the COMMIT',
    );
    await assert.rejects(
      inTenant(db, 'batch-a', async (trx) => {
        await copy(trx);
        await note(trx, 'batch-a', 'U-next', 'after the copy');
      }),
      meant,
      'found at the next statement',
    );
    assert.deepEqual(
      (await notes('batch-a')).filter((n) => n.id.startsWith('U-')),
      [{ id: 'U-taken', note: 'first' }],
      'nothing of the failed transactions stays',
    );
    // Another failure of the same group passes unchanged.
    await assert.rejects(
      inTenant(db, 'batch-a', async (trx) => {
        await deferred(trx, trx.raw(`select 1 / 0`), taken);
      }),
      (error: { code?: string }) => error.code === '22012',
    );
    assert.equal((await inTenant(db, 'batch-a', (trx) => trx.raw('select 1 as one'))).rows[0].one, 1, 'the connection is usable again');
  });

  it('runs a deferred statement before the statement it leaves with', async () => {
    const seen = await db.transaction(async (trx) => {
      await deferred(trx, trx('tenants').where({ id: 'batch-d' }).update({ name: 'D2' }));
      return (await trx('tenants').where({ id: 'batch-d' }).first('name')) as { name: string };
    });
    assert.equal(seen.name, 'D2');
  });

  it('reads under the tenant scope, and the scope ends with the read', async () => {
    const scoped = await readInTenant(
      db,
      'batch-a',
      async (trx) => (await trx.raw(`select current_setting('app.tenant_id') as tenant, current_user as role`)).rows[0],
    );
    assert.deepEqual(scoped, { tenant: 'batch-a', role: 'platform_tenant' });
    const after = (await db.raw(`select current_setting('app.tenant_id', true) as tenant, current_user as role`)).rows[0];
    assert.notEqual(after.role, 'platform_tenant');
    assert.ok(!after.tenant, 'no tenant outside the read');
  });

  it("gives a transaction the tenant's settings it read, also when they changed since the last one", async () => {
    const settings = () =>
      inTenant(db, 'batch-b', async (trx, tenant) => ({ tenant, scoped: (await trx.raw(`select current_setting('app.tenant_id') as t`)).rows[0].t }));
    assert.deepEqual(await settings(), { tenant: { broker_integration: 'CLIENT' }, scoped: 'batch-b' });
    await database.db('tenants').where({ id: 'batch-b' }).update({ broker_integration: 'SERVICE' });
    let runs = 0;
    const written = await inTenant(db, 'batch-b', async (trx, tenant) => {
      runs++;
      // Written with the settings given: the first run's (stale) must not commit.
      await note(trx, 'batch-b', `U${runs}`, tenant.broker_integration);
      return tenant.broker_integration;
    });
    assert.equal(written, 'SERVICE');
    assert.equal(runs, 2, 'run again with the settings read first');
    assert.deepEqual(await notes('batch-b'), [{ id: 'U2', note: 'SERVICE' }]);
    assert.deepEqual((await settings()).tenant, { broker_integration: 'SERVICE' });
  });

  it('still refuses the stale settings when the work swallows the error', async () => {
    await database.db('tenants').where({ id: 'batch-b' }).update({ broker_integration: 'CLIENT' });
    let runs = 0;
    const result = await inTenant(db, 'batch-b', async (trx, tenant) => {
      runs++;
      await trx.raw('select 1').catch(() => undefined);
      await note(trx, 'batch-b', `U${runs + 2}`, `swallowed ${tenant.broker_integration}`).catch(() => undefined);
      return tenant.broker_integration;
    });
    assert.equal(result, 'CLIENT');
    assert.equal(runs, 2);
    assert.deepEqual(await notes('batch-b'), [
      { id: 'U2', note: 'SERVICE' },
      { id: 'U4', note: 'swallowed CLIENT' },
    ]);
  });

  it('prepares a statement with values once per connection, also when its group failed after its Parse', async () => {
    // One connection: the names it prepared are what this session's pg_prepared_statements lists.
    // (The marker is a value of this query, not in its text, which is prepared too.)
    const prepared = async () =>
      ((await db.raw(`select count(*)::int as n from pg_prepared_statements where strpos(statement, ?) > 0`, ['marked_'])) as { rows: { n: number }[] })
        .rows[0]!.n;
    const read = () => db.transaction((trx) => trx.raw('select id as marked_1 from tenants where id = ?', ['batch-a']));
    for (let i = 0; i < 3; i++) assert.deepEqual((await read()).rows, [{ marked_1: 'batch-a' }]);
    assert.equal(await prepared(), 1, 'the read is prepared once, whatever the times it ran');

    // A group whose second statement fails at its Parse (no such table yet): the server skips the
    // rest. The first is prepared, and used again without a Parse (a second one of the same name
    // would be refused); the others are not, and are parsed when they run next.
    const update = `update tenants set name = name where id = ? returning id as marked_2`;
    const later = `select count(*) as marked_3 from batch_later where id > ?`;
    const last = `select ?::text as marked_4`;
    const failed = db.transaction(async (trx) => {
      await deferred(trx, trx.raw(update, ['batch-a']));
      await deferred(trx, trx.raw(later, [0]));
      await trx.raw(last, ['x']);
    });
    await assert.rejects(failed, /batch_later/);
    await database.db.raw('create table batch_later (id int)');
    await db.transaction(async (trx) => {
      await deferred(trx, trx.raw(update, ['batch-a']));
      await deferred(trx, trx.raw(later, [0]));
      assert.deepEqual((await trx.raw(last, ['y'])).rows, [{ marked_4: 'y' }]);
    });
    assert.equal(await prepared(), 4);
  });

  it('parses a new text once when a group holds it twice', async () => {
    const twice = `select ?::text as marked_5`;
    const answers = await db.transaction(async (trx) => {
      await deferred(trx, trx.raw(twice, ['a']));
      await deferred(trx, trx.raw(twice, ['b']));
      return (await trx.raw(`select ?::text as marked_6`, ['c'])).rows;
    });
    assert.deepEqual(answers, [{ marked_6: 'c' }]);
    assert.deepEqual((await db.raw(twice, ['d'])).rows, [{ marked_5: 'd' }]);
  });

  it('gives up a connection whose prepared statement a change of its table made stale, and prepares afresh on the next', async () => {
    const own = createDb(database.url, 1);
    try {
      await own.raw('create table batch_stale (id int)');
      const all = () => own.transaction((trx) => trx.raw('select * from batch_stale where id > ?', [0]));
      await all();
      const pid = async () => (await own.raw('select pg_backend_pid() as pid, ? as x', [1])).rows[0].pid as number;
      const before = await pid();
      await database.db.raw('alter table batch_stale add column name text');
      await assert.rejects(all(), (error: { code?: string }) => error.code === '0A000');
      assert.notEqual(await pid(), before, 'a new connection');
      assert.deepEqual((await all()).rows, []);
    } finally {
      await own.destroy();
    }
  });

  it('prepares nothing by name when told not to (DATABASE_PREPARED_STATEMENTS=false)', async () => {
    const unnamed = createDb(database.url, 1, { preparedStatements: false });
    try {
      for (let i = 0; i < 2; i++) await unnamed.transaction((trx) => trx.raw('select ?::int as n', [i]));
      assert.deepEqual((await unnamed.raw('select count(*)::int as n from pg_prepared_statements where ? = ?', [1, 1])).rows, [{ n: 0 }]);
    } finally {
      await unnamed.destroy();
    }
  });
});
