// The faults of bench:topology, one after the other with a quiet gap, each timestamped on the load's
// clock, with HAProxy's counters read before each: a management and a data replica killed and
// started again, a rolling restart of every replica, the NATS meta leader killed and started again,
// the Postgres primary killed (time until a write through Patroni's HAProxy succeeds, time until the
// old node is the synchronous standby again), and the primary stalled (SIGSTOP) past its leader
// lock and woken, with writes sent straight to it that must all be refused
// (docs/adr/0050-postgres-failover.md).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { HAProxyServerStats } from '@platform/dev-stack/haproxy';
import type { Topology } from '@platform/dev-stack/topology';
import type { Check } from './consistency.ts';
import { round } from './harness.ts';
import type { Recorder } from './open-loop.ts';

export type FaultKind = 'management_kill' | 'data_kill' | 'rolling_restart' | 'nats_kill' | 'primary_kill' | 'primary_stall';

export type FaultRecord = {
  kind: FaultKind;
  /** What was done, to whom. */
  action: string;
  /** On the recorder's clock (ms): the fault's first blow, and when what it hit was back. */
  startAt: number;
  readyAt: number;
  /** HAProxy's counters of the services' listeners right before the fault. */
  statsBefore: HAProxyServerStats[];
  /** Measured figures of the fault (seconds unless named otherwise). */
  figures: Record<string, number | string | null>;
  checks: Check[];
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PROBE_EVERY_MS = 250;

/** One statement on a fresh connection, bounded in time: a probe must not hang on a stalled server. */
async function once(url: string, sql: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, query_timeout: 3_000, statement_timeout: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.query(sql, values);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Milliseconds from `since` (performance.now()) until a write through Patroni's HAProxy succeeds. */
async function untilWritable(databaseUrl: string, since: number, limitMs: number): Promise<number | null> {
  while (performance.now() - since < limitMs) {
    const ok = await once(databaseUrl, 'insert into bench_write_probe default values').then(
      () => true,
      () => false,
    );
    if (ok) return performance.now() - since;
    await sleep(PROBE_EVERY_MS);
  }
  return null;
}

export async function prepareProbes(databaseUrl: string): Promise<void> {
  await once(databaseUrl, 'create table if not exists bench_write_probe (id bigserial primary key, at timestamptz not null default now())');
  await once(databaseUrl, 'create table if not exists bench_fencing (id text primary key)');
}

export async function runFaults(options: {
  topology: Topology;
  recorder: Recorder;
  quietMs: number;
  /** How long the killed NATS node stays down. */
  natsDownMs: number;
  /** How long the primary stays stopped (at least until another node is promoted). */
  stallMs: number;
  log: (line: string) => void;
}): Promise<FaultRecord[]> {
  const { topology, recorder, log } = options;
  const { patroni, nats, replicas, proxy } = topology;
  const faults: FaultRecord[] = [];
  const fault = async (kind: FaultKind, action: string, act: (record: FaultRecord) => Promise<void>) => {
    const record: FaultRecord = { kind, action, startAt: 0, readyAt: 0, statsBefore: await proxy.serverStats(), figures: {}, checks: [] };
    record.startAt = recorder.now();
    log(`fault: ${action}`);
    await act(record);
    record.readyAt = recorder.now();
    log(`  back after ${round((record.readyAt - record.startAt) / 1000, 1)} s ${JSON.stringify(record.figures)}`);
    faults.push(record);
    await sleep(options.quietMs);
  };
  const node = (name: string) => patroni.nodes.find((n) => n.name === name)!;

  await sleep(options.quietMs);
  const killAndRestart = async (replica: Topology['replicas']['management'][number]) => {
    await replica.kill();
    await replica.restart();
  };
  await fault('management_kill', `SIGKILL of ${replicas.management[0]!.name}, started again at once`, () => killAndRestart(replicas.management[0]!));
  await fault('data_kill', `SIGKILL of ${replicas.data[0]!.name}, started again at once`, () => killAndRestart(replicas.data[0]!));
  await fault(
    'rolling_restart',
    `rolling restart (SIGTERM, start, ready, next) of ${[...replicas.management, ...replicas.data].map((r) => r.name).join(', ')}`,
    async () => {
      for (const replica of [...replicas.management, ...replicas.data]) {
        await replica.stop();
        await replica.restart();
      }
    },
  );

  const leader = await nats.metaLeader();
  await fault('nats_kill', `SIGKILL of NATS node ${leader} (the JetStream meta leader), started again ${options.natsDownMs / 1000} s later`, async (r) => {
    const victim = nats.nodes.find((n) => n.name === leader)!;
    await victim.kill();
    await sleep(options.natsDownMs);
    await victim.restart();
    r.figures.new_meta_leader = await nats.metaLeader(60_000);
  });

  const killed = await patroni.primary();
  await fault('primary_kill', `SIGKILL of the Postgres primary ${killed} (Patroni and Postgres), started again once writes succeed`, async (r) => {
    const since = performance.now();
    await node(killed).kill();
    const back = await untilWritable(topology.databaseUrl, since, 120_000);
    r.figures.writes_back_s = back === null ? null : round(back / 1000, 1);
    r.figures.new_primary = await patroni.primary();
    const restarted = performance.now();
    node(killed).restart();
    const standby = await patroni.synchronousStandby(180_000);
    r.figures.synchronous_standby_again_s = round((performance.now() - restarted) / 1000, 1);
    r.figures.synchronous_standby = standby;
    r.checks.push({
      name: `writes through HAProxy again ≤ 15 s after the primary's SIGKILL`,
      ok: back !== null && back <= 15_000,
      detail: back === null ? 'no write succeeded within 120 s' : `${round(back / 1000, 1)} s (${r.figures.new_primary} promoted)`,
    });
    r.checks.push({
      name: 'the killed primary rejoined as the synchronous standby',
      ok: standby === killed,
      detail: `${standby} after ${r.figures.synchronous_standby_again_s} s`,
    });
  });

  const stalled = await patroni.primary();
  await fault(
    'primary_stall',
    `SIGSTOP of the Postgres primary ${stalled} for ${options.stallMs / 1000} s (until another node is promoted), then SIGCONT`,
    async (r) => {
      const since = performance.now();
      node(stalled).sigstop();
      const writable = untilWritable(topology.databaseUrl, since, 180_000);
      let promoted = stalled;
      while (promoted === stalled && performance.now() - since < 180_000) {
        promoted = await patroni.primary(1_000).catch(() => stalled);
        if (promoted === stalled) await sleep(PROBE_EVERY_MS);
      }
      r.figures.promoted_after_s = round((performance.now() - since) / 1000, 1);
      r.figures.new_primary = promoted;
      await sleep(Math.max(0, options.stallMs - (performance.now() - since)));
      node(stalled).sigcont();
      r.figures.stopped_for_s = round((performance.now() - since) / 1000, 1);
      // Straight to the woken node's own port, not through HAProxy: it must refuse whatever it is sent
      // while it learns it lost the leader lock, and nothing sent there may reach the new primary.
      const attempts: { id: string; refused: string | undefined }[] = [];
      for (let i = 0; i < 10; i++) {
        const id = `fenced-${randomUUID()}`;
        const refused = await once(node(stalled).url(), 'insert into bench_fencing (id) values ($1)', [id]).then(
          () => undefined,
          (error: unknown) => String((error as Error).message ?? error).slice(0, 80),
        );
        attempts.push({ id, refused });
        await sleep(500);
      }
      const back = await writable;
      r.figures.writes_back_s = back === null ? null : round(back / 1000, 1);
      const landed = await once(node(promoted).url(), 'select id from bench_fencing where id = any($1)', [attempts.map((a) => a.id)]);
      const accepted = attempts.filter((a) => a.refused === undefined);
      const reasons = [...new Set(attempts.flatMap((a) => (a.refused ? [a.refused] : [])))];
      r.figures.direct_writes = attempts.length;
      r.figures.direct_writes_accepted = accepted.length;
      r.figures.direct_writes_on_new_primary = landed.rowCount ?? 0;
      r.checks.push({
        name: 'the stalled primary is fenced: every write sent straight to it after it woke refused, none on the new primary',
        ok: accepted.length === 0 && (landed.rowCount ?? 0) === 0,
        detail: `${attempts.length} direct writes over 5 s after SIGCONT, ${accepted.length} accepted, ${landed.rowCount ?? 0} found on ${promoted}; refused with: ${reasons.join(' | ') || '—'}`,
      });
      const rejoined = performance.now();
      const standby = await patroni.synchronousStandby(180_000);
      r.figures.synchronous_standby_again_s = round((performance.now() - rejoined) / 1000, 1);
      r.figures.synchronous_standby = standby;
    },
  );
  return faults;
}
