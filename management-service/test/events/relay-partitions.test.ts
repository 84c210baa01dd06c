import assert from 'node:assert/strict';
import { connectNats, createLogger, ensureStreams, jetstream, streams, subjects, type NatsConnection } from '@platform/shared';
import { waitFor } from '@platform/dev-stack/ports';
import { createTestDatabase, testNatsUrl, type TestDatabase } from '@platform/test-support/database';
import { createTenant } from '../../src/admin/provisioning.ts';
import { envelope } from '../../src/domain/events.ts';
import { startRelay } from '../../src/events/relay.ts';
import { PARTITION_OF_TENANT, insertEvents } from '../../src/store/outbox.ts';
import { inTenant } from '../../src/store/tenant-scope.ts';

/** Two relays on an outbox cut into two partitions by tenant (docs/adr/0032-relay-partitions.md). */
describe('outbox relay partitions', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let nats: NatsConnection;
  before(async () => {
    database = await createTestDatabase();
    nats = await connectNats(testNatsUrl(), 'relay-partitions-test');
    await ensureStreams(nats);
  });
  after(async () => {
    await nats?.close();
    await database?.drop();
  });

  const partitionOf = async (tenantId: string) =>
    Number((await database.db.raw(`select ${PARTITION_OF_TENANT.replace('tenant_id', '?')} as p`, [tenantId, 2])).rows[0].p);
  const unpublished = async (tenants: string[]) =>
    Number(((await database.db('outbox').whereIn('tenant_id', tenants).whereNull('published_at').count('* as n')) as { n: string }[])[0]!.n);
  /** The event ids of a tenant as JetStream holds them, in stream order. */
  const streamed = async (tenantId: string, expected: number) => {
    const consumer = await jetstream(nats).consumers.get(streams.tenantEvents.name, { filter_subjects: subjects.tenantEvents(tenantId) });
    const ids: string[] = [];
    const messages = await consumer.fetch({ max_messages: expected + 1, expires: 2000 });
    for await (const m of messages) ids.push((m.json() as { id: string }).id);
    return ids;
  };

  it('publishes a partition while another is held, and keeps every tenant’s order, each event once', async () => {
    // Two tenants in each partition.
    const byPartition: string[][] = [[], []];
    for (let i = 0; byPartition.some((p) => p.length < 2); i++) {
      const id = `part-${process.pid}-${i}`;
      const p = await partitionOf(id);
      if (byPartition[p]!.length < 2) {
        await createTenant(database.db, { id });
        byPartition[p]!.push(id);
      }
    }
    const tenants = byPartition.flat();
    // Interleaved writes: 40 rounds, each a transaction of 3 events per tenant.
    const now = new Date().toISOString();
    for (let round = 0; round < 40; round++)
      for (const tenantId of tenants)
        await inTenant(database.db, tenantId, (trx) =>
          insertEvents(
            trx,
            tenantId,
            [0, 1, 2].map((k) => envelope('portfolios', 'creation', { id: `P${round}-${k}` }, now, `P${round}-${k}`)),
          ),
        );
    const outboxOrder = async (tenantId: string) =>
      (await database.db('outbox').where({ tenant_id: tenantId }).orderBy('seq').select('event_id')).map((r: { event_id: string }) => r.event_id);

    // Partition 0 is held (as by a replica that is busy with it); the relays publish partition 1 meanwhile.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = database.db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(720413, 0)');
      locked();
      await held;
    });
    await isLocked;
    const logger = createLogger('test', 'error');
    const relays = await Promise.all(
      [1, 2].map(() => startRelay({ db: database.db, databaseUrl: database.url, nats, logger, pollMs: 50, batch: 25, partitions: 2 })),
    );
    try {
      await waitFor('partition 1 published', async () => {
        if ((await unpublished(byPartition[1]!)) > 0) throw new Error('not yet');
      });
      assert.equal(await unpublished(byPartition[0]!), 2 * 40 * 3, 'nothing of the held partition');
      release();
      await holder;
      await waitFor('everything published', async () => {
        if ((await unpublished(tenants)) > 0) throw new Error('not yet');
      });
      for (const tenantId of tenants) {
        const expected = await outboxOrder(tenantId);
        assert.equal(expected.length, 120);
        assert.deepEqual(await streamed(tenantId, expected.length), expected, `${tenantId}: every event once, in the order of its changes`);
      }
    } finally {
      release();
      await Promise.all(relays.map((r) => r.stop()));
    }
  });
});
