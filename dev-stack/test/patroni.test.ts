import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { waitFor } from '@platform/dev-stack/ports';
import { startPatroni, type PatroniNode, type PatroniStack } from '@platform/dev-stack/patroni';

// Real etcd, Patroni, Postgres 15 and HAProxy (Debian's packages, installed when missing). Each
// step builds on the cluster the step before left, as an operator's machine would live through
// them. Durations are printed, never asserted.

async function query<R extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, query_timeout: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const ids = async (url: string) => new Set((await query<{ id: number }>(url, 'select id from writes')).map((r) => r.id));
const inRecovery = async (url: string) => (await query<{ r: boolean }>(url, 'select pg_is_in_recovery() as r'))[0]!.r;
const seconds = (ms: number) => (ms / 1000).toFixed(1);

describe('dev stack: Postgres with automatic failover (Patroni, etcd, HAProxy)', function () {
  this.timeout(240_000);
  let dir: string;
  let stack: PatroniStack;
  let nextId = 1;
  const node = (name: string): PatroniNode => stack.nodes.find((n) => n.name === name)!;
  const other = (name: string): PatroniNode => stack.nodes.find((n) => n.name !== name)!;

  /** Once `standby` is the synchronous standby again, with every row of `expected` replayed. */
  const rejoined = async (standby: PatroniNode, expected: Set<number>) => {
    assert.equal(await stack.synchronousStandby(), standby.name, `${standby.name} is the synchronous standby`);
    assert.equal(await inRecovery(standby.url()), true, `${standby.name} is in recovery`);
    await waitFor(`every row replayed on ${standby.name}`, async () => {
      const there = await ids(standby.url());
      for (const id of expected) if (!there.has(id)) throw new Error(`row ${id} not replayed yet`);
    });
  };

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'patroni-'));
    const started = Date.now();
    stack = await startPatroni({ dir, log: (line) => console.log(`      [patroni] ${line}`) });
    console.log(`      cluster up with a synchronous standby in ${seconds(Date.now() - started)} s`);
    await query(stack.databaseUrl, 'create table writes (id int primary key, at timestamptz not null default now())');
  });

  let failed = false;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });
  after(async () => {
    await stack?.stop();
    // The nodes' logs stay for a failed run.
    if (failed) console.log(`      logs of etcd, Patroni and Postgres kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });

  it('writes through HAProxy land on the node Patroni calls the primary, and reach its synchronous standby', async () => {
    const primary = await stack.primary();
    const id = nextId++;
    await query(stack.databaseUrl, 'insert into writes (id) values ($1)', [id]);
    assert.equal(await inRecovery(node(primary).url()), false, `${primary} is the primary`);
    assert.ok((await ids(node(primary).url())).has(id), 'the row is on the primary');
    assert.equal(await inRecovery(other(primary).url()), true, 'the other node is a standby');
    await rejoined(other(primary), new Set([id]));
  });

  it('SIGKILL of the primary: the standby is promoted, the same URL takes writes again, and no acknowledged write is lost', async () => {
    const old = await stack.primary();
    const acknowledged = new Set(await ids(stack.databaseUrl));
    let killedAt = 0;
    let firstWriteAfter = 0;
    let failedWrites = 0;
    let killed = false;
    // One writer that keeps going across the kill: every insert it saw committed must survive it.
    const writer = (async () => {
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        const id = nextId++;
        const sentAfterKill = killedAt > 0 && killed;
        try {
          await query(stack.databaseUrl, 'insert into writes (id) values ($1)', [id]);
          acknowledged.add(id);
          // Only a write sent once the node was dead shows that the standby took over.
          if (sentAfterKill && !firstWriteAfter) firstWriteAfter = Date.now();
          if (firstWriteAfter && Date.now() - firstWriteAfter > 1_000) return;
        } catch {
          failedWrites++;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    })();
    await waitFor('writes before the kill', async () => {
      if (acknowledged.size < 20) throw new Error('too few yet');
    });
    killedAt = Date.now();
    await node(old).kill();
    killed = true;
    await writer;
    assert.ok(firstWriteAfter > 0, 'a write through HAProxy succeeded after the kill');
    const promoted = await stack.primary();
    assert.notEqual(promoted, old, 'the standby was promoted');
    const onNewPrimary = await ids(node(promoted).url());
    const lost = [...acknowledged].filter((id) => !onNewPrimary.has(id));
    assert.deepEqual(lost, [], 'every acknowledged write is on the new primary');
    console.log(
      `      writes through HAProxy again ${seconds(firstWriteAfter - killedAt)} s after SIGKILL of ${old}; ${acknowledged.size} acknowledged writes, ${failedWrites} refused meanwhile, none lost`,
    );

    const restarted = Date.now();
    node(old).restart();
    await rejoined(node(old), acknowledged);
    assert.equal(await stack.primary(), promoted, 'the restarted node did not take the role back');
    console.log(`      ${old} back as the synchronous standby ${seconds(Date.now() - restarted)} s after its restart`);
  });

  it('a primary stalled past the TTL is replaced, and after it wakes no write sent to it directly lands', async () => {
    const stalled = await stack.primary();
    const before = await ids(stack.databaseUrl);
    const stoppedAt = Date.now();
    node(stalled).sigstop();
    let promoted: string | undefined;
    await waitFor(
      'a promotion while the primary is stalled',
      async () => {
        const name = await stack.primary(1_000);
        if (name === stalled) throw new Error('the stalled node is still called the primary');
        promoted = name;
      },
      120_000,
    );
    const promotedAfter = Date.now() - stoppedAt;
    node(stalled).sigcont();
    // Straight to the old primary's own port, not through HAProxy: the fencing must hold there too.
    const fencedId = nextId++;
    const direct = await Promise.allSettled([query(node(stalled).url(), 'insert into writes (id) values ($1)', [fencedId])]);
    assert.equal(direct[0]!.status, 'rejected', 'the woken old primary refused the write');
    console.log(
      `      ${promoted} promoted ${seconds(promotedAfter)} s after ${stalled} stalled; the direct write to ${stalled} was refused: ${(direct[0] as PromiseRejectedResult).reason}`,
    );

    assert.equal(await stack.primary(), promoted, 'the promoted node keeps the role');
    // Read on the node itself: HAProxy may not have checked it since its promotion.
    assert.equal((await ids(node(promoted!).url())).has(fencedId), false, 'the refused write is not on the new primary');
    await rejoined(node(stalled), before);
    assert.equal((await ids(node(stalled).url())).has(fencedId), false, 'nor on the old primary once it rejoined');
    const id = nextId++;
    await waitFor('a write through HAProxy', () => query(stack.databaseUrl, 'insert into writes (id) values ($1) on conflict do nothing', [id]));
    assert.ok((await ids(node(promoted!).url())).has(id), 'HAProxy sends writes to the promoted node');
  });
});
