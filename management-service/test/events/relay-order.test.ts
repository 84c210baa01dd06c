import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectNats, createLogger, ensureStreams, jetstream, streams, subjects, type NatsConnection } from '@platform/shared';
import { waitFor } from '@platform/dev-stack/ports';
import { createTestDatabase, testNatsUrl, type TestDatabase } from '@platform/test-support/database';
import { createTenant } from '../../src/admin/provisioning.ts';
import { envelope } from '../../src/domain/events.ts';
import { startRelay } from '../../src/events/relay.ts';
import { insertEvents } from '../../src/store/outbox.ts';
import { inTenant } from '../../src/store/tenant-scope.ts';

type Publisher = ReturnType<typeof jetstream>;
type Fault = (attempt: () => Promise<unknown>) => Promise<unknown>;

/**
 * A publish of a batch that is slow or fails (a NATS node or the stream's leader changing) must not
 * let a later change of the same entity reach JetStream first (docs/adr/0054-publish-waves.md).
 */
describe('outbox relay order under a faulty publish', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let nats: NatsConnection;
  before(async () => {
    database = await createTestDatabase();
    nats = await connectNats(testNatsUrl(), 'relay-order-test');
    await ensureStreams(nats);
  });
  after(async () => {
    await nats?.close();
    await database?.drop();
  });

  /** Commits 3 changes of each of 4 entities, interleaved (a1 b1 c1 d1 a2 …), and relays them with `fault` on the first publish. */
  async function relayWithFault(tenantId: string, fault: Fault) {
    await createTenant(database.db, { id: tenantId });
    const now = new Date().toISOString();
    for (let change = 1; change <= 3; change++)
      await inTenant(database.db, tenantId, (trx) =>
        insertEvents(
          trx,
          tenantId,
          ['a', 'b', 'c', 'd'].map((entity) => envelope('portfolios', 'status-update', { id: entity, change }, now, `${tenantId}-${entity}`)),
        ),
      );
    const js = jetstream(nats);
    let faulted = false;
    const publisher: Pick<Publisher, 'publish'> = {
      publish: (subject, payload, options) => {
        if (faulted) return js.publish(subject, payload, options);
        faulted = true;
        return fault(() => js.publish(subject, payload, options)) as ReturnType<Publisher['publish']>;
      },
    };
    const relay = await startRelay({
      db: database.db,
      databaseUrl: database.url,
      nats,
      logger: createLogger('test', 'fatal'),
      pollMs: 50,
      publisher,
    });
    try {
      await waitFor('everything published', async () => {
        const left = (await database.db('outbox').where({ tenant_id: tenantId }).whereNull('published_at').count('* as n')) as { n: string }[];
        if (Number(left[0]!.n) > 0) throw new Error('not yet');
      });
    } finally {
      await relay.stop();
    }
    assert.ok(faulted, 'the fault was injected');
    const outbox = (await database.db('outbox').where({ tenant_id: tenantId }).orderBy('seq').select('event_id', 'entity_id')) as {
      event_id: string;
      entity_id: string;
    }[];
    const consumer = await jetstream(nats).consumers.get(streams.tenantEvents.name, { filter_subjects: subjects.tenantEvents(tenantId) });
    const stream: string[] = [];
    for await (const m of await consumer.fetch({ max_messages: outbox.length + 1, expires: 2000 })) stream.push((m.json() as { id: string }).id);
    assert.deepEqual([...stream].sort(), outbox.map((e) => e.event_id).sort(), 'every event once');
    for (const entity of new Set(outbox.map((e) => e.entity_id))) {
      const ids = outbox.filter((e) => e.entity_id === entity).map((e) => e.event_id);
      assert.deepEqual(
        stream.filter((id) => ids.includes(id)),
        ids,
        `${entity}: its changes in commit order`,
      );
    }
  }

  it('keeps each entity’s order when the first publish of a batch is acknowledged late (sent again after a time-out)', async () => {
    await relayWithFault(`order-slow-${process.pid}`, async (attempt) => {
      await sleep(300);
      return attempt();
    });
  });

  it('keeps each entity’s order when the first publish of a batch fails and the batch is tried again', async () => {
    await relayWithFault(`order-fail-${process.pid}`, async () => {
      throw new Error('no acknowledgement from JetStream');
    });
  });
});
