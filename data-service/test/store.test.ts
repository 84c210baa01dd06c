import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { testWorkDir } from '@platform/test-support/database';
import { openDuckStore } from '../src/store/duckdb.ts';
import { buildReferenceFile, newestReferenceFile } from '../src/store/reference-files.ts';

const instrument = (isin: string, name: string) => `insert into instruments (isin, name) values ('${isin}', '${name}')`;

describe('data service store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(testWorkDir(), 'store-'));
  });

  it('builds the replica schema on first start and keeps it on the next', async () => {
    const referenceDir = join(dir, 'reference');
    await buildReferenceFile(referenceDir, 'empty', async () => undefined);
    const path = join(dir, 'replica.duckdb');
    await (await openDuckStore({ path, referenceDir })).close();
    await (await openDuckStore({ path, referenceDir })).close();
    const instance = await DuckDBInstance.create(path);
    const connection = await instance.connect();
    const tables = (await connection.runAndReadAll(`select table_name from information_schema.tables order by 1`)).getRowObjects().map((r) => r.table_name);
    assert.deepEqual(tables, ['custom_reference', 'inspirations', 'schema_migrations', 'universes']);
    assert.equal((await connection.runAndReadAll('select count(*)::int as n from schema_migrations')).getRowObjects()[0]!.n, 2);
    connection.closeSync();
    instance.closeSync();
  });

  it('publishes a reference file only when complete, and refuses to start without one', async () => {
    const referenceDir = join(dir, 'reference');
    await assert.rejects(openDuckStore({ path: join(dir, 'a.duckdb'), referenceDir }), /No reference data/);
    await assert.rejects(buildReferenceFile(referenceDir, 'broken', async (conn) => conn.run('insert into nowhere values (1)')));
    assert.equal(await newestReferenceFile(referenceDir), undefined);
  });

  it('switches to a newer reference file while a request on the old one finishes undisturbed', async () => {
    const referenceDir = join(dir, 'reference');
    await buildReferenceFile(referenceDir, 'v1', (conn) => conn.run(instrument('US0378331005', 'Old name')));
    const store = await openDuckStore({ path: join(dir, 'replica.duckdb'), referenceDir });
    try {
      const name = (ref: string, conn: Parameters<Parameters<typeof store.use>[0]>[0]['conn']) =>
        conn.runAndReadAll(`select name from ${ref}.instruments`).then((r) => String(r.getRows()[0]![0]));
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const inFlight = store.use(async ({ conn, ref }) => {
        const before = await name(ref, conn);
        await gate;
        return [before, await name(ref, conn)];
      });
      assert.equal(await store.reload(), false);
      await new Promise((r) => setTimeout(r, 5)); // the next version sorts after the first
      await buildReferenceFile(referenceDir, 'v2', (conn) => conn.run(instrument('US0378331005', 'New name')));
      assert.equal(await store.reload(), true);
      assert.equal(await store.use(({ conn, ref }) => name(ref, conn)), 'New name');
      release();
      assert.deepEqual(await inFlight, ['Old name', 'Old name']);
      const attached = await store.use(({ conn }) => conn.runAndReadAll(`select database_name from duckdb_databases() where database_name like 'ref_%'`));
      assert.deepEqual(
        attached.getRows().map((r) => r[0]),
        ['ref_2'],
      );
    } finally {
      await store.close();
    }
  });
});
