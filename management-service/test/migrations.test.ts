import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import knex, { type Knex } from 'knex';
import { migrationFolders, newId, newUlid } from '@platform/shared';
import { testWorkDir } from '@platform/test-support/database';
import { migrateLatest, migrationFiles } from '../src/store/migrate.ts';

const owner = (path: string) => basename(join(path, '..', '..'));

/** An empty database of the test cluster (not cloned from the migrated template). */
async function emptyDatabase(): Promise<{ db: Knex; drop: () => Promise<void> }> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL!;
  const name = `migrate_${newUlid().toLowerCase()}`;
  const admin = knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = knex({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 2 } });
  return {
    db,
    drop: async () => {
      await db.destroy();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

/** Tables, columns, indexes, policies and grants of the public schema, comparable between databases. */
async function schemaOf(db: Knex): Promise<unknown> {
  const q = async (sql: string) => (await db.raw(sql)).rows;
  return {
    columns: await q(
      `select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns where table_schema = 'public' and table_name <> 'schema_migrations_lock' order by 1, 2`,
    ),
    indexes: await q(`select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by 1, 2`),
    policies: await q(`select tablename, policyname, qual, with_check from pg_policies order by 1, 2`),
    rls: await q(`select relname, relrowsecurity, relforcerowsecurity from pg_class where relnamespace = 'public'::regnamespace and relkind = 'r' order by 1`),
    grants: await q(`select table_name, privilege_type from information_schema.role_table_grants where grantee = 'platform_tenant' order by 1, 2`),
  };
}

describe('database migrations: each package owns its tables, one command applies them all', function () {
  this.timeout(120_000);

  it("orders every owner's files by name, each name once, each table created by its owner", async () => {
    const files = await migrationFiles();
    const names = [...files.keys()];
    assert.deepEqual(names, [...names].sort());
    assert.deepEqual(
      [...files].map(([name, path]) => `${owner(path)}/${name}`),
      [
        'management-service/001_tenants_and_credentials.sql',
        'management-service/002_entities.sql',
        'management-service/003_collection_queries.sql',
        'management-service/004_outbox.sql',
        'management-service/005_event_destinations.sql',
        'management-service/006_funding.sql',
        'shared/006_idempotency_keys.sql',
        'data-service/007_data_tenant_data.sql',
        'management-service/008_token_revocation.sql',
        'management-service/009_optimization_requests.sql',
        'management-service/010_broker_orders.sql',
        'shared/011_rate_limits.sql',
        'management-service/012_outbox_traceparent.sql',
        'management-service/013_bus_credentials.sql',
        'management-service/014_assessment_expiry_index.sql',
        'management-service/015_pending_withdrawals_index.sql',
        'management-service/016_outbox_entity_index.sql',
        'management-service/017_broker_instructions_sent.sql',
        'management-service/018_user_email_any_case.sql',
        'management-service/019_user_erasures.sql',
        'management-service/020_retention.sql',
      ].filter((f) => names.includes(basename(f))),
    );
    for (const [, path] of files) {
      const created = [...readFileSync(path, 'utf8').matchAll(/create table (?:if not exists )?(\w+)/g)].map((m) => m[1]!);
      for (const table of created) {
        if (table.startsWith('data_')) assert.equal(owner(path), 'data-service', `${table} in ${path}`);
        else if (table === 'idempotency_keys' || table === 'rate_limits') assert.equal(owner(path), 'shared', `${table} in ${path}`);
        else assert.equal(owner(path), 'management-service', `${table} in ${path}`);
      }
    }
  });

  it('refuses two files of one name in different folders', async () => {
    const a = mkdtempSync(join(testWorkDir(), 'mig-a-'));
    const b = mkdtempSync(join(testWorkDir(), 'mig-b-'));
    try {
      writeFileSync(join(a, '001_one.sql'), 'select 1');
      writeFileSync(join(b, '001_one.sql'), 'select 1');
      await assert.rejects(migrationFiles([a, b]), /001_one\.sql is in both/);
    } finally {
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  });

  it("upgrades a database migrated when every file was the management service's, without loss, to the schema of a fresh one", async () => {
    // The layout before the split: one folder, the Idempotency-Key table inside 006_funding.sql.
    const files = await migrationFiles();
    const before = mkdtempSync(join(testWorkDir(), 'migrations-before-'));
    for (const [name, path] of files) {
      if (name === '006_idempotency_keys.sql') continue;
      const sql = readFileSync(path, 'utf8');
      writeFileSync(join(before, name), name === '006_funding.sql' ? readFileSync(files.get('006_idempotency_keys.sql')!, 'utf8') + sql : sql);
    }
    const old = await emptyDatabase();
    const fresh = await emptyDatabase();
    try {
      await migrateLatest(old.db, [before]);
      await old.db.raw(`insert into tenants (id, name) values ('bank', 'Bank')`);
      await old.db.raw(
        `insert into idempotency_keys (tenant_id, method, path, key, request_hash, expires_at) values ('bank', 'POST', '/users/', 'k-1', 'h', now() + interval '1 day')`,
      );
      await old.db.raw(`insert into data_custom_reference (tenant_id, isin, key, value) values ('bank', 'IE00B4L5Y983', 'esg', '"A"')`);

      assert.deepEqual(await migrateLatest(old.db), ['006_idempotency_keys.sql'], 'only the file that is new by name runs');
      assert.deepEqual(await migrateLatest(old.db), [], 'and nothing the second time');
      assert.equal((await old.db('idempotency_keys').where({ key: 'k-1' })).length, 1);
      assert.equal((await old.db('data_custom_reference').where({ tenant_id: 'bank' })).length, 1);

      assert.deepEqual(await migrateLatest(fresh.db), [...files.keys()]);
      assert.deepEqual(await schemaOf(old.db), await schemaOf(fresh.db), 'the upgraded schema is the fresh one');
    } finally {
      await old.drop();
      await fresh.drop();
      rmSync(before, { recursive: true, force: true });
    }
  });

  it('018 makes e-mails unique whatever their case without failing on users that already differ only by case, and changes no user', async () => {
    const before = mkdtempSync(join(testWorkDir(), 'migrations-before-018-'));
    for (const [name, path] of await migrationFiles()) if (name < '018_user_email_any_case.sql') copyFileSync(path, join(before, name));
    const old = await emptyDatabase();
    try {
      await migrateLatest(old.db, [before]);
      await old.db.raw(`insert into tenants (id, name) values ('bank', 'Bank'), ('shop', 'Shop')`);
      const insertUser = (tenant: string, email: string, at: string) =>
        old.db.raw(`insert into entities (tenant_id, id, type, version, doc, created_at, version_at) values (?, ?, 'users', 1, ?::jsonb, ?, ?)`, [
          tenant,
          newId('U'),
          JSON.stringify({ email }),
          at,
          at,
        ]);
      await insertUser('bank', 'eve.S@ex.com', '2024-01-01T00:00:00Z');
      await insertUser('bank', 'Eve.S@EX.com', '2024-02-01T00:00:00Z');
      await insertUser('bank', 'EVE.S@EX.COM', '2024-03-01T00:00:00Z');
      await insertUser('shop', 'eve.s@ex.com', '2024-01-15T00:00:00Z');
      const users = () => old.db('entities').select('tenant_id', 'id', 'doc').orderBy('id');
      const stored = await users();

      // Later migrations come along; 018 is the first of them.
      const applied = await migrateLatest(old.db);
      assert.equal(applied[0], '018_user_email_any_case.sql', 'applied despite the duplicates');
      assert.deepEqual(await users(), stored, 'no user changed');
      const { rows } = await old.db.raw(`select indexdef from pg_indexes where indexname in ('entities_user_email', 'entities_user_email_any_case')`);
      assert.equal(rows.length, 1);
      assert.match(rows[0].indexdef, /lower/);

      const taken = insertUser('bank', 'eve.s@EX.com', '2024-04-01T00:00:00Z');
      await assert.rejects(taken, (error: { code?: string; constraint?: string }) => {
        assert.equal(error.code, '23505');
        assert.equal(error.constraint, 'entities_user_email_any_case');
        return true;
      });
      await insertUser('bank', 'adam@ex.com', '2024-04-01T00:00:00Z');
      await insertUser('shop', 'adam@ex.com', '2024-04-01T00:00:00Z');
      assert.equal((await users()).length, stored.length + 2);
      const { rows: rls } = await old.db.raw(`select relforcerowsecurity from pg_class where relname = 'entities'`);
      assert.equal(rls[0].relforcerowsecurity, true, 'row-level security is forced again');
    } finally {
      await old.drop();
      rmSync(before, { recursive: true, force: true });
    }
  });

  it("names the three owners' folders", () => {
    assert.deepEqual(
      migrationFolders.map((f) => owner(join(f, 'x'))),
      ['shared', 'management-service', 'data-service'],
    );
  });
});
