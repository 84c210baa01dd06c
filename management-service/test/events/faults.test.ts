import assert from 'node:assert/strict';
import { join } from 'node:path';
import { connectNats, jetstreamManager, streams, subjects } from '@platform/shared';
import { startNatsServer, type NatsServer } from '@platform/dev-stack/nats-server';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { build, machineApi } from '@platform/test-support/fixtures';
import { testWorkDir } from '@platform/test-support/database';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

describe('outbound events when NATS is down', function () {
  this.timeout(120_000);
  let nats: NatsServer;
  let platform: TestPlatform;
  let port: number;
  const dir = join(testWorkDir(), `nats-fault-${process.pid}`);

  before(async () => {
    port = await freePort();
    nats = await startNatsServer({ port, dir, name: 'fault-test', log: () => undefined });
    platform = await startTestPlatform({ NATS_URL: nats.url });
  });
  after(async () => {
    await platform.stop();
    await nats.stop();
  });

  it('keeps every change working and delivers all events once NATS is back, duplicates only with the same id', async () => {
    const tenant = await platform.tenant();
    const api = await machineApi(platform, tenant);
    const owner = (await api('POST', '/users/', {})).body.id;
    await nats.stop();
    const created = await Promise.all(Array.from({ length: 100 }, (_, i) => api('POST', '/portfolios/', build.portfolio(owner, { name: `p${i}` }))));
    assert.deepEqual([...new Set(created.map((r) => r.status))], [201], 'changes do not depend on NATS');
    nats = await startNatsServer({ port, dir, name: 'fault-test', log: () => undefined });

    const nc = await connectNats(nats.url, 'fault-check');
    try {
      const jsm = await jetstreamManager(nc);
      const subject = subjects.tenantEvents(tenant.tenantId);
      let count = 0;
      for (let i = 0; i < 200 && count < 100; i++) {
        const info = await jsm.streams.info(streams.tenantEvents.name, { subjects_filter: subject }).catch(() => undefined);
        count = Number(info?.state.subjects?.[subject] ?? 0);
        if (count < 100) await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(count, 100, 'all 100 creation events reached the stream, none twice (Nats-Msg-Id de-duplicates)');
      // The relay marks a batch published in the transaction that claimed it, which commits after
      // the stream acknowledged the batch: wait for that commit.
      const unpublished = async () =>
        Number((await platform.database.db('outbox').where({ tenant_id: tenant.tenantId }).whereNull('published_at').count('* as n'))[0]!.n);
      await waitFor(
        'the relay to mark the events published',
        async () => {
          if ((await unpublished()) > 0) throw new Error('not yet');
        },
        30_000,
      );
      assert.equal(await unpublished(), 0);
    } finally {
      await nc.close();
    }
  });
});
