import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { newId } from '@platform/shared';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { created } from './export-helpers.ts';

/** Enough transactions that the document is megabytes, far more than the socket's buffers hold. */
const TRANSACTIONS = 20_000;

/**
 * A large export is streamed from one snapshot (docs/adr/0060-personal-data-export.md): complete
 * when read to its end, and its snapshot ended when the client leaves midway.
 */
describe('personal data export, streamed', function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let api: Api & { token: string };
  let user: string;

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
    user = await created(api, '/users/', build.user());
    const portfolio = await created(api, '/portfolios/', build.portfolio(user));
    // Written in SQL, each as the service stores a transaction: through the API this would take minutes.
    const ids = Array.from({ length: TRANSACTIONS }, () => newId('T'));
    const doc = {
      ...build.transaction(),
      instrument_id: '$EUR',
      unit_price: null,
      datetime: '2026-01-02T10:00:00.000Z',
      optimization_id: null,
      external_id: null,
    };
    await platform.database.db.transaction(async (trx) => {
      await trx.raw(`select set_config('app.tenant_id', ?, true)`, [tenant.tenantId]);
      const common = [tenant.tenantId, portfolio, JSON.stringify(doc), ids];
      await trx.raw(
        `insert into entities (tenant_id, id, type, parent_id, version, doc, readable_by, modifiable_by, created_at, version_at)
         select ?, id, 'transactions', ?, 1, ?::jsonb, '{}', '{}', now(), now() from unnest(?::text[]) id`,
        common,
      );
      await trx.raw(
        `insert into entity_versions (tenant_id, id, version, doc, deleted, version_at)
         select ?, id, 1, ?::jsonb, false, now() from unnest(?::text[]) id`,
        [tenant.tenantId, JSON.stringify(doc), ids],
      );
    });
  });
  after(() => platform?.stop());

  /** The export's response, its body not read yet. */
  const open = () =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(`${platform.managementUrl}/users/${user}/export/`, { headers: { authorization: `Bearer ${api.token}` } }, resolve);
      req.on('error', reject);
      req.end();
    });

  /**
   * Sessions of the test database in a transaction that began by `since`: an export's snapshot
   * (the service's own transactions are short, and those begun later are not counted).
   */
  const heldSnapshots = async (since: Date) =>
    (
      await platform.database.db.raw(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle' and xact_start <= ?`,
        [since],
      )
    ).rows[0].n as number;

  /** Checks, a bounded number of times, until no transaction begun by `since` is open. */
  const snapshotsEnd = async (since: Date) => {
    let n = await heldSnapshots(since);
    for (let i = 0; i < 200 && n > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      n = await heldSnapshots(since);
    }
    return n;
  };

  it('is written chunked and complete, every transaction once', async () => {
    const res = await open();
    const opened = new Date();
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const document = JSON.parse(Buffer.concat(chunks).toString());
    assert.equal(document.portfolios.length, 1);
    const transactions = document.portfolios[0].transactions as { transaction: { id: string } }[];
    assert.equal(new Set(transactions.map((t) => t.transaction.id)).size, TRANSACTIONS);
    assert.equal(await snapshotsEnd(opened), 0, 'the snapshot ends with the document');
  });

  it('ends its snapshot when the client leaves midway', async () => {
    const res = await open();
    const opened = new Date();
    assert.equal(res.statusCode, 200);
    // The first piece arrived; then the client stops reading and goes, the document far from written.
    await new Promise((resolve) => res.once('data', resolve));
    res.pause();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(await heldSnapshots(opened), 1, 'the snapshot is held while the client does not read');
    res.destroy();
    assert.equal(await snapshotsEnd(opened), 0, 'no snapshot left open by the abandoned export');
    assert.equal((await api('GET', `/users/${user}`)).status, 200, 'the service answers on');
  });
});
