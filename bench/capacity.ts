// Capacity as replicas are added, on the production topology of `npm run topology` (Patroni,
// three NATS servers with every stream in three copies, two replicas of each service behind
// HAProxy): (1) the management service with one replica in rotation against two, all else equal,
// alternating, with CPU per request of every process; (2) the nightly batch over robo-advised
// portfolios on two data replicas and on one (the second one stopped: its JetStream consumer would
// go on taking requests outside HAProxy's rotation), with optimizations/s, the split of solves
// and CPU per optimization; (3) the replica count for 1,000,000 portfolios in an hour from those
// figures (docs/adr/0033-load-and-chaos-benchmarks.md, docs/scaling.md).
// `npm run bench:capacity` (BENCH_NIGHTLY, BENCH_NIGHTLY_COMPARE, BENCH_SECONDS, BENCH_ROUNDS,
// BENCH_CONCURRENCY change 100000, 5000, 20, 2 and 32).
import { mkdirSync, mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';
import { startTopology } from '@platform/dev-stack/topology';
import { record, round } from './lib/harness.ts';
import { loadAverage } from './lib/capacity-cpu.ts';
import { managementScaling } from './lib/capacity-management.ts';
import { nightlyRun, type NightlyFigures } from './lib/capacity-nightly.ts';
import { plan } from './lib/capacity-plan.ts';
import { startMiddleware } from './lib/middleware.ts';
import { Recorder } from './lib/open-loop.ts';

const NIGHTLY = Number(process.env.BENCH_NIGHTLY ?? 100_000);
const COMPARE = Math.min(NIGHTLY, Number(process.env.BENCH_NIGHTLY_COMPARE ?? 5000));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const TARGET = { portfolios: 1_000_000, seconds: 3600 };
// The production overlay's CPU limits (k8s/base/*/deployment.yaml) and its autoscalers' target.
const LIMITS = { data: 2, management: 1 };
const UTILISATION = 0.7;

const began = performance.now();
const log = (line: string) => console.log(`[bench ${round((performance.now() - began) / 1000, 1)} s] ${line}`);

const work = mkdtempSync(join(tmpdir(), 'platform-capacity-'));
chmodSync(work, 0o755);
const dir = join(work, 'topology');
const logDir = join(work, 'logs');
mkdirSync(logDir, { recursive: true });
const topology = await startTopology({
  dir,
  log,
  optimizer: true,
  output: { dir: logDir },
  sample: { instruments: 1000, years: 1 },
  env: {
    // The batch is started by the benchmark, not by the replicas' clock; orders execute at once.
    management: { DATABASE_POOL_MAX: '20', LOG_LEVEL: 'warn', OPTIMIZER_NIGHTLY_AT: '', BROKER_SIMULATED_LATENCY_MS: '0', RATE_LIMIT_ACCESS_KEY: '0' },
    // Info: one line per solve, to tell which replica solved what.
    data: { LOG_LEVEL: 'info' },
  },
});
// Ctrl-C or a kill still stops Patroni, NATS and the replicas, which run in process groups of their own.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void topology.stop().finally(() => process.exit(1)));
const db = knex({ client: 'pg', connection: topology.databaseUrl, pool: { min: 0, max: 4 } });
let failed = true;
try {
  log('(1) management: one replica in rotation against two');
  const recorder = new Recorder();
  const middleware = await startMiddleware({
    db,
    managementUrl: topology.managementUrl,
    dataUrl: topology.dataUrl,
    recorder,
    clients: 100,
    retryForMs: 10_000,
    operations: ['get_portfolio', 'query_by_owner', 'patch_name', 'deposit', 'poll_events'],
    log,
  });
  const management = await managementScaling({ topology, dir, middleware, recorder, rounds: ROUNDS, seconds: SECONDS, concurrency: CONCURRENCY, log });
  log(`management: ${JSON.stringify(management)}`);

  log('(2) the nightly batch');
  const nightly: NightlyFigures[] = [];
  let tenant = 0;
  const nightlyOf = async (portfolios: number) => {
    const figures = await nightlyRun({ topology, db, dir, logDir, tenantId: `robo-${++tenant}`, portfolios, log });
    log(`nightly: ${JSON.stringify(figures)}`);
    return figures;
  };
  nightly.push(await nightlyOf(COMPARE));
  const second = topology.replicas.data[1]!;
  await second.stop();
  nightly.push(await nightlyOf(COMPARE));
  await second.restart();
  if (NIGHTLY > COMPARE) nightly.push(await nightlyOf(NIGHTLY));

  const [twoSmall, oneSmall] = [nightly[0]!, nightly[1]!];
  const full = nightly.at(-1)!;
  const sum = (cpu: Record<string, number>, prefix: string) =>
    round(
      Object.entries(cpu)
        .filter(([k]) => k.startsWith(prefix))
        .reduce((a, [, v]) => a + v, 0),
      3,
    );
  const cpuMs = {
    data: sum(full.cpu_ms_per_optimization, 'data'),
    management: sum(full.cpu_ms_per_optimization, 'management'),
    postgres: sum(full.cpu_ms_per_optimization, 'postgres'),
    nats: sum(full.cpu_ms_per_optimization, 'nats'),
  };
  const capacity = plan({
    ...TARGET,
    cpuMs,
    oneReplicaRate: oneSmall.optimizations_per_s,
    writtenS: full.written_s,
    writtenFor: full.portfolios,
    limits: LIMITS,
    utilisation: UTILISATION,
  });

  const list = (o: Record<string, number>, least = 0) =>
    Object.entries(o)
      .filter(([, v]) => v >= least)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  /** The share of a core the data replicas kept busy while the run answered. */
  const dataBusy = (n: NightlyFigures) => round((100 * sum(n.cpu_seconds, 'data')) / n.answered_s, 0);
  const w = management.windows;
  const meanOf = (replicas: number, pick: (x: (typeof w)[number]) => number) => {
    const v = w.filter((x) => x.replicas === replicas).map(pick);
    return round(v.reduce((a, b) => a + b, 0) / v.length, 3);
  };
  const roles = Object.keys(w[0]!.cpu_ms_per_request);
  const nightlyRoles = Object.keys(full.cpu_seconds);
  const pgShare = (x: (typeof w)[number]) => {
    const all = Object.values(x.cpu_seconds).reduce((a, b) => a + b, 0);
    return all ? x.cpu_seconds.postgres! / all : 0;
  };
  const markdown = [
    '### Capacity with replicas (`npm run bench:capacity`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine shared with other work (1-minute load average with each figure below), on the production topology of \`npm run topology\`: Postgres 15 with Patroni and HAProxy, three NATS servers with every stream in three copies, two replicas of each service behind HAProxy in HTTP mode; the load generator on the same cores.`,
    '',
    `**(1) Management service, one replica in rotation against two.** The same HAProxy, Postgres and NATS; for one replica the second is put in \`maint\` at HAProxy's runtime API. A closed loop of ${CONCURRENCY} requests in flight of the Client Middleware's management operations (\`bench/lib/middleware.ts\`: reads, queries by owner, PATCHes, deposits, event polls at their weights; 100 customers) for ${SECONDS} s per window, windows alternating one, two, one, two.`,
    '',
    '| window | replicas | answered req/s | p50 / p99 ms | errors | sessions per replica | machine busy | load avg |',
    '|---|---|---|---|---|---|---|---|',
    ...w.map(
      (x, i) =>
        `| ${i + 1} | ${x.replicas} | ${x.answered_rps} | ${x.p50_ms} / ${x.p99_ms} | ${x.errors} | ${Object.values(x.sessions).join(' / ')} | ${round(100 * x.machine_busy_share, 0)} % | ${x.load_average_1min} |`,
    ),
    '',
    `Medians: **${management.median_rps.one} req/s with one replica, ${management.median_rps.two} with two: ${management.ratio}×.**`,
    '',
    'CPU ms per answered request, mean of the windows of each configuration:',
    '',
    `| process | one replica | two replicas |`,
    '|---|---|---|',
    ...roles.map((r) => `| ${r} | ${meanOf(1, (x) => x.cpu_ms_per_request[r]!)} | ${meanOf(2, (x) => x.cpu_ms_per_request[r]!)} |`),
    '',
    `What limits the gain here: the machine's two cores were ${round(100 * meanOf(1, (x) => x.machine_busy_share), 0)} % busy with one replica and ${round(100 * meanOf(2, (x) => x.machine_busy_share), 0)} % with two (everyone's processes); Postgres took ${round(100 * meanOf(1, pgShare), 0)} % and ${round(100 * meanOf(2, pgShare), 0)} % of the CPU of the topology and the load generator. A second replica adds a core's worth of HTTP and JSON work only where a core is free.`,
    '',
    `**(2) The nightly batch.** Robo-advised paper portfolios of a 3-ETF policy, copied by SQL from one made through the interface, one tenant per run; the batch written by \`runNightlyIfDue\` as a replica's nightly loop runs it, solved by the data replicas' JetStream consumers (one durable shared by the replicas), stored and executed by the management replicas (simulated broker). For one data replica the second is stopped (out of HAProxy's rotation its consumer would still take requests).`,
    '',
    '| portfolios | data replicas | written | answered | executed | optimizations/s | outcomes | solves per replica | CPU ms per optimization | machine busy | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...nightly.map(
      (n) =>
        `| ${n.portfolios.toLocaleString('en')} | ${n.data_replicas} | ${n.written_s} s | ${n.answered_s} s | ${n.executed_s} s | **${n.optimizations_per_s}** | ${list(n.outcomes)} | ${list(n.solves)} | ${list(n.cpu_ms_per_optimization, 0.05)} | ${round(100 * n.machine_busy_share, 0)} % | ${n.load_average_1min} |`,
    ),
    '',
    `Two data replicas against one on ${COMPARE.toLocaleString('en')} portfolios: ${round(twoSmall.optimizations_per_s / oneSmall.optimizations_per_s)}× the optimizations/s; one replica alone: ${oneSmall.optimizations_per_s}/s, its process busy ${dataBusy(oneSmall)} % of one core meanwhile (with two: ${dataBusy(twoSmall)} % of a core for both together) while the machine's cores were ${round(100 * oneSmall.machine_busy_share, 0)} % busy: the solves are not what the batch waits for on this machine.`,
    '',
    `**(3) ${TARGET.portfolios.toLocaleString('en')} portfolios in one hour** need ${capacity.rate} optimizations/s. At the CPU per optimization of the ${full.portfolios.toLocaleString('en')}-portfolio run (data ${cpuMs.data} ms, management ${cpuMs.management} ms, Postgres ${cpuMs.postgres} ms, NATS ${cpuMs.nats} ms): data ${capacity.cores.data} cores → ${capacity.replicas.data} data replica(s) at ${UTILISATION * 100} % of their ${LIMITS.data}-core limit; management ${capacity.cores.management} cores → ${capacity.replicas.management} management replica(s) at ${UTILISATION * 100} % of ${LIMITS.management} core; Postgres ${capacity.cores.postgres} cores on the one primary; NATS ${capacity.cores.nats} cores over its three servers. At the rate one data replica reached here alone (${oneSmall.optimizations_per_s}/s, on two cores shared with everything), ${capacity.dataReplicasAtMeasuredRate} data replicas, an upper bound: that replica was ${dataBusy(oneSmall)} % busy, so the rest of the machine set its rate. Writing the batch's requests (one replica, in series): ${capacity.writeS} s of the hour.`,
    '',
    `The whole command took ${round((performance.now() - began) / 1000, 0)} s; load average at the end ${loadAverage()}.`,
  ].join('\n');
  record(
    'capacity',
    {
      date: new Date().toISOString(),
      load_average_1min: loadAverage(),
      management,
      nightly,
      plan: { target: TARGET, limits: LIMITS, utilisation: UTILISATION, cpu_ms_per_optimization: cpuMs, ...capacity },
      nightly_roles: nightlyRoles,
    },
    markdown,
    {
      docs: `Capacity with replicas on the production topology (\`npm run bench:capacity\`): [bench/results/capacity.md](../bench/results/capacity.md), summed up in [docs/scaling.md](scaling.md#capacity-with-replicas).`,
    },
  );
  console.log(markdown);
  middleware.stop();
  failed = false;
} finally {
  await db.destroy();
  await topology.stop();
  if (!failed) rmSync(work, { recursive: true, force: true });
  else log(`kept ${work} (logs in ${logDir})`);
}
