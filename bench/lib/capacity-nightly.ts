// The nightly batch over robo-advised portfolios on the topology's data replicas: a tenant of its
// own per run, its portfolios copied by SQL from one made through the interface, the batch run as
// the replicas' nightly loop runs it (runNightlyIfDue), and followed until every optimization is
// answered and every order executed. Which replica solved what is counted from their logs (one
// `optimization solved` line per solve).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Knex } from 'knex';
import pg from 'pg';
import { createLogger } from '@platform/shared';
import type { Topology } from '@platform/dev-stack/topology';
import { createAccessKey, createApiKey, createTenant } from '@platform/management-service/admin/provisioning';
import { runNightlyIfDue } from '@platform/management-service/jobs/optimizer-nightly';
import { roboPaperPortfolio, threeEtfPolicy } from './robo-policy.ts';
import { round } from './harness.ts';
import { cpuBetween, loadAverage, machineBusyShare, machineTicks, topologyCpu } from './capacity-cpu.ts';
import { copyPortfolio } from './capacity-seed.ts';

export type NightlyFigures = {
  portfolios: number;
  data_replicas: number;
  seed_s: number;
  /** The batch's requests written (one replica, one transaction per batch of portfolios). */
  written_s: number;
  answered_s: number;
  executed_s: number;
  optimizations_per_s: number;
  /** Optimizations by status and execution status (`SUCCESS EXECUTED`, …). */
  outcomes: Record<string, number>;
  /** Solves per data replica, from its log. */
  solves: Record<string, number>;
  cpu_seconds: Record<string, number>;
  cpu_ms_per_optimization: Record<string, number>;
  machine_busy_share: number;
  load_average_1min: number;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `optimization solved` lines in each data replica's log so far. */
function solvesByReplica(logDir: string, names: string[]): Record<string, number> {
  return Object.fromEntries(
    names.map((name) => {
      let text = '';
      try {
        text = readFileSync(join(logDir, `${name}.log`), 'utf8');
      } catch {
        // No log yet.
      }
      return [name, text.split('"optimization solved"').length - 1];
    }),
  );
}

export async function nightlyRun(options: {
  topology: Topology;
  db: Knex;
  dir: string;
  logDir: string;
  tenantId: string;
  portfolios: number;
  log: (line: string) => void;
}): Promise<NightlyFigures> {
  const { topology, db, tenantId, portfolios, log } = options;
  const M = topology.managementUrl;
  await createTenant(db, { id: tenantId });
  const key = await createAccessKey(db, tenantId, 'capacity');
  const api = await createApiKey(db, tenantId, 'capacity');
  const login = await fetch(`${M}/auth/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(key) });
  const { access_token: token } = (await login.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${M}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string };
  };
  const policy = await post('/policies/', await threeEtfPolicy({ dataUrl: topology.dataUrl, tenantId, apiKey: api.api_key, name: 'Capacity' }));
  const owner = await post('/users/', {});
  const template = await post('/portfolios/', roboPaperPortfolio({ name: 'Robo', ownerId: owner.id, policyId: policy.id }));
  const pool = new pg.Pool({ connectionString: topology.databaseUrl, max: 2 });
  let seed_s: number;
  try {
    seed_s = await copyPortfolio(pool, { tenant: tenantId, template: template.id, count: portfolios - 1, prefix: tenantId });
  } finally {
    await pool.end();
  }
  log(`${tenantId}: ${portfolios} robo-advised portfolios seeded in ${seed_s} s`);

  const progress = async () => {
    const rows = (await db('entities').where({ tenant_id: tenantId, type: 'optimizations' }).select(
      db.raw(`count(*) filter (where doc ->> 'status' <> 'PENDING') as answered`),
      db.raw(`count(*) filter (where doc ->> 'execution_status' = 'EXECUTED') as executed`),
      // Answered and nothing left to execute: executed, refused, or an answer without orders to send.
      db.raw(
        `count(*) filter (where doc ->> 'status' <> 'PENDING' and (doc ->> 'status' <> 'SUCCESS' or doc ->> 'execution_status' in ('EXECUTED', 'REFUSED'))) as settled`,
      ),
    )) as { answered: string; executed: string; settled: string }[];
    return { answered: Number(rows[0]!.answered), executed: Number(rows[0]!.executed), settled: Number(rows[0]!.settled) };
  };
  const outcomes = async () =>
    Object.fromEntries(
      (
        (await db('entities')
          .where({ tenant_id: tenantId, type: 'optimizations' })
          .select(db.raw(`concat_ws(' ', doc ->> 'status', doc ->> 'execution_status') as outcome`), db.raw('count(*)::int as n'))
          .groupByRaw('1')) as { outcome: string; n: number }[]
      ).map((r) => [r.outcome, r.n]),
    );

  const data = topology.replicas.data.filter((r) => r.child().exitCode === null && r.child().signalCode === null);
  const names = topology.replicas.data.map((r) => r.name);
  const pids = () => Object.fromEntries([...topology.replicas.management, ...data].map((r) => [r.name, r.child().pid!] as [string, number]));
  // Each run is today's batch of its own: the day's mark of an earlier run is removed first.
  await db('optimizer_nightly_runs').delete();
  const solvesBefore = solvesByReplica(options.logDir, names);
  const cpuBefore = topologyCpu({ dir: options.dir, replicas: pids() });
  const ticksBefore = machineTicks();
  const started = performance.now();
  const run = await runNightlyIfDue({ db, logger: createLogger('bench', 'warn'), at: '00:00' });
  if (!run) throw new Error('the nightly batch did not run');
  const written_s = round((performance.now() - started) / 1000);
  log(`${tenantId}: ${run.requested} requests written in ${written_s} s`);
  let answeredAt: number | undefined;
  let last: { answered: number; executed: number; settled: number };
  let lastLog = performance.now();
  const limitMs = Math.max(600_000, portfolios * 100);
  for (;;) {
    last = await progress();
    if (answeredAt === undefined && last.answered >= portfolios) answeredAt = performance.now();
    if (last.settled >= portfolios) break;
    if (performance.now() - started > limitMs) throw new Error(`not done after ${limitMs / 1000} s: ${JSON.stringify(last)}`);
    if (performance.now() - lastLog > 30_000) {
      lastLog = performance.now();
      log(`${tenantId}: ${last.answered} answered, ${last.executed} executed after ${round((performance.now() - started) / 1000, 0)} s`);
    }
    // Counting a large batch's optimizations costs the primary CPU: less often for large ones.
    await sleep(portfolios > 20_000 ? 5000 : 1000);
  }
  const executed_s = round((performance.now() - started) / 1000);
  const cpu = cpuBetween(cpuBefore, topologyCpu({ dir: options.dir, replicas: pids() }));
  const busy = machineBusyShare(ticksBefore, machineTicks());
  const solvesAfter = solvesByReplica(options.logDir, names);
  const answered_s = round((answeredAt! - started) / 1000);
  // Later runs must not ask for these portfolios again.
  await db('tenants').where({ id: tenantId }).update({ disabled_at: new Date() });
  return {
    portfolios,
    data_replicas: data.length,
    seed_s,
    written_s,
    answered_s,
    executed_s,
    optimizations_per_s: round(portfolios / answered_s, 1),
    outcomes: await outcomes(),
    solves: Object.fromEntries(names.map((n) => [n, solvesAfter[n]! - solvesBefore[n]!])),
    cpu_seconds: cpu,
    cpu_ms_per_optimization: Object.fromEntries(Object.entries(cpu).map(([k, s]) => [k, round((1000 * s) / portfolios, 3)])),
    machine_busy_share: busy,
    load_average_1min: loadAverage(),
  };
}
