import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import knex from 'knex';
import { newUlid } from '@platform/shared';
import { testWorkDir } from '@platform/test-support/database';
import { lockInstruction } from '../../src/store/broker-instructions.ts';
import { migrateLatest, migrationFiles } from '../../src/store/migrate.ts';

describe('migration 010: broker instructions of several kinds (docs/adr/0022-execution-and-withdrawals.md)', function () {
  this.timeout(120_000);

  it('reads an unsettled deposit written before it as the DEPOSIT it was, and holds each kind to its fields', async () => {
    const files = await migrationFiles();
    const before = mkdtempSync(join(testWorkDir(), 'migrations-before-010-'));
    for (const [name, path] of files) if (name < '010') writeFileSync(join(before, name), readFileSync(path, 'utf8'));
    const adminUrl = process.env.TEST_PG_ADMIN_URL!;
    const name = `migrate_${newUlid().toLowerCase()}`;
    const admin = knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
    await admin.raw(`create database ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const db = knex({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 2 } });
    try {
      await migrateLatest(db, [before]);
      await db.raw(`insert into tenants (id, name, broker_integration) values ('bank', 'Bank', 'SERVICE')`);
      const now = new Date().toISOString();
      const deposit = { id: 'B-old', tenant_id: 'bank', kind: 'DEPOSIT', portfolio_id: 'P1', transaction_id: 'T1', amount: '250.50', currency: 'EUR' };
      await db('broker_instructions').insert({ ...deposit, created_at: now, not_before: now });

      assert.deepEqual((await migrateLatest(db))[0], '010_broker_orders.sql', 'the migrations from 010 on apply in order');
      const read = await db.transaction((trx) => lockInstruction(trx, 'bank', 'B-old'));
      assert.deepEqual(read, {
        id: 'B-old',
        tenant_id: 'bank',
        kind: 'DEPOSIT',
        portfolio_id: 'P1',
        transaction_id: 'T1',
        amount: '250.50',
        currency: 'EUR',
        attempts: 0,
        // Open when migration 017 ran: it may have gone to the broker already, so it goes again as it is.
        sent: true,
      });

      const row = (over: Record<string, unknown>) => ({ tenant_id: 'bank', portfolio_id: 'P1', currency: 'EUR', created_at: now, not_before: now, ...over });
      await db('broker_instructions').insert(row({ id: 'B-orders', kind: 'ORDERS', optimization_id: 'O1', orders: JSON.stringify([]) }));
      await db('broker_instructions').insert(row({ id: 'B-robo', kind: 'WITHDRAWAL', amount: '10' }));
      for (const [id, bad] of [
        ['B-1', { kind: 'ORDERS', optimization_id: 'O2' }],
        ['B-2', { kind: 'ORDERS', optimization_id: 'O3', orders: '[]', amount: '1' }],
        ['B-3', { kind: 'DEPOSIT', amount: '1' }],
        ['B-4', { kind: 'WITHDRAWAL', transaction_id: 'T2' }],
        ['B-5', { kind: 'SWAP', amount: '1', transaction_id: 'T3' }],
      ] as const) {
        await assert.rejects(db('broker_instructions').insert(row({ id, ...bad })), /violates check constraint/, id);
      }
      // One execution per optimization, one withdrawal in flight per portfolio.
      await assert.rejects(
        db('broker_instructions').insert(row({ id: 'B-6', kind: 'ORDERS', optimization_id: 'O1', orders: '[]' })),
        /broker_instructions_one_execution/,
      );
      await assert.rejects(db('broker_instructions').insert(row({ id: 'B-7', kind: 'WITHDRAWAL', amount: '5' })), /broker_instructions_one_withdrawal/);
      await db('broker_instructions').where({ id: 'B-robo' }).update({ settled_at: now });
      await db('broker_instructions').insert(row({ id: 'B-8', kind: 'WITHDRAWAL', amount: '5' }));
    } finally {
      await db.destroy();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
      rmSync(before, { recursive: true, force: true });
    }
  });
});
