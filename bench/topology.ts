// Chaos of the production topology (dev-stack/src/topology.ts: Postgres with failover, a three-node
// NATS cluster, two replicas of each service behind HAProxy), under the Client Middleware mix of
// bench:load at a fixed rate (reads retried too, by the client package's policy), an analyst's load
// on the data service and the robo nightly batch. Faults one after the other (bench/lib/topology-faults.ts);
// per fault what the clients saw and HAProxy did (bench/lib/topology-report.ts); afterwards the
// invariants of bench:chaos, the event order on the stream and in GET /events/, and every nightly
// portfolio answered. Exits 1 when a check fails (docs/adr/0053-topology-chaos-benchmark.md).
// `npm run bench:topology` (BENCH_RATE, BENCH_ANALYST_RATE, BENCH_QUIET_SECONDS, BENCH_NIGHTLY,
// BENCH_CLIENTS change the 30 req/s, 3 req/s, 15 s, 8,000 portfolios and 100 virtual clients).
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';
import { createApiKey } from '@platform/management-service/admin/provisioning';
import { startTopology } from '@platform/dev-stack/topology';
import { analystLoad } from './lib/analyst.ts';
import { checkDeposits, checkEvents, checkFeed, checkPatches, waitForOutbox, type Check } from './lib/consistency.ts';
import { record, round } from './lib/harness.ts';
import { OPERATIONS, startMiddleware, type Middleware } from './lib/middleware.ts';
import { seededRandom } from '@platform/test-support/random';
import { checkNightly, seedNightly } from './lib/nightly.ts';
import { Recorder, runOpenLoop, summarize } from './lib/open-loop.ts';
import { prepareProbes, runFaults } from './lib/topology-faults.ts';
import { faultChecks, faultFigures, faultTable, LEAD_MS } from './lib/topology-report.ts';

const RATE = Number(process.env.BENCH_RATE ?? 30);
const ANALYST_RATE = Number(process.env.BENCH_ANALYST_RATE ?? 3);
const QUIET_SECONDS = Number(process.env.BENCH_QUIET_SECONDS ?? 15);
const NIGHTLY = Number(process.env.BENCH_NIGHTLY ?? 8000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 100);
const NATS_DOWN_SECONDS = 5;
const STALL_SECONDS = 20;
/** Retries of a call by the client package: back-off from 100 ms doubling to 2 s, for up to two minutes. */
const POLICY = { maxAttempts: Number.MAX_SAFE_INTEGER, baseDelayMs: 100, maxDelayMs: 2000, maxElapsedMs: 120_000 };
// Two management replicas share Postgres's 300 connections with the data replicas, Patroni and the checks.
const POOL_MAX = '20';

const began = performance.now();
const log = (line: string) => console.log(`[bench ${round((performance.now() - began) / 1000, 1)} s] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'bench-topology-'));
chmodSync(dir, 0o755);
// Beside the topology's folder, which it empties at start.
const logs = mkdtempSync(join(tmpdir(), 'bench-topology-logs-'));
const topology = await startTopology({
  dir,
  log,
  output: { dir: logs },
  sample: { instruments: 400, years: 2 },
  optimizer: true,
  env: { management: { DATABASE_POOL_MAX: POOL_MAX } },
});
// Ctrl-C or SIGTERM: exit, so that the components' exit hooks end what the topology started.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
// Connections opened before the load: the nightly batch needs three at once, and opening one on a
// machine this busy can take longer than the pool waits.
const db = knex({ client: 'pg', connection: topology.databaseUrl, pool: { min: 4, max: 6 } });
await Promise.all(Array.from({ length: 4 }, () => db.raw('select 1')));
let middleware: Middleware | undefined;
let failed = true;
try {
  await prepareProbes(topology.databaseUrl);
  const recorder = new Recorder();
  const started = Date.now();
  const nightly = await seedNightly({ db, managementUrl: topology.managementUrl, dataUrl: topology.dataUrl, count: NIGHTLY });
  log(`seeded ${NIGHTLY} robo-advised portfolios of tenant ${nightly.tenantId} in ${round((Date.now() - started) / 1000, 1)} s`);
  // Each was optimized when created; the batch skips one whose optimization is still PENDING.
  log(`their first optimizations answered ${await nightly.settled(300_000)} s later`);
  middleware = await startMiddleware({
    db,
    managementUrl: topology.managementUrl,
    dataUrl: topology.dataUrl,
    recorder,
    clients: CLIENTS,
    retryForMs: POLICY.maxElapsedMs,
    retryReads: true,
    log,
  });
  const mw = middleware;
  const apiKey = (await createApiKey(db, mw.tenantId, 'analyst')).api_key;
  const universe = (await (
    await fetch(`${topology.dataUrl}/data/reference/universe/?universe_name=GLOBAL&fields=NAME`, {
      headers: { 'x-tenant-id': mw.tenantId, 'x-api-key': apiKey },
    })
  ).json()) as { data: Record<string, unknown> };
  const analyst = analystLoad({
    dataUrl: topology.dataUrl,
    tenantId: mw.tenantId,
    apiKey,
    isins: Object.keys(universe.data),
    recorder,
    policy: POLICY,
    random: seededRandom(7),
  });

  log(`load at ${RATE} req/s (middleware) and ${ANALYST_RATE} req/s (analyst); faults ${QUIET_SECONDS} s apart`);
  const stopLoad = new AbortController();
  const loadStart = recorder.now();
  const loop = (rate: number, issue: (i: number, dueAt: number) => Promise<void>) =>
    runOpenLoop({ recorder, rate, seconds: 3600, maxInFlight: 5000, issue, signal: stopLoad.signal });
  const loading = Promise.all([loop(RATE, mw.operate), loop(ANALYST_RATE, analyst.operate)]);
  loading.catch(() => undefined);
  await sleep(2000);
  const batch = await nightly.run();
  log(`nightly batch: ${batch.requested} optimizations requested in ${round(batch.ms / 1000, 1)} s`);
  const batchAt = recorder.now();
  // When the batch was all answered, on the load's clock: which faults it ran through.
  const batchAnswered = nightly.settled(900_000).then(() => round((recorder.now() - loadStart) / 1000, 1));
  const faults = await runFaults({
    topology,
    recorder,
    quietMs: QUIET_SECONDS * 1000,
    natsDownMs: NATS_DOWN_SECONDS * 1000,
    stallMs: STALL_SECONDS * 1000,
    log,
  }).finally(() => stopLoad.abort());
  const loadEnd = recorder.now();
  const statsAtEnd = await topology.proxy.serverStats();
  const loadAverage = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  log('load stopped; waiting for the calls still being retried');
  const [run] = await loading;

  const results = [...mw.results, ...analyst.results];
  const perFault = faultFigures({ faults, statsAtEnd, results, attempts: recorder.attempts, loadStart, loadEnd });
  for (const f of perFault) log(JSON.stringify(f));

  log('settling unanswered writes, waiting for the outbox and the nightly batch');
  const settled = await mw.settle(90_000);
  const unpublished = await waitForOutbox(db, mw.tenantId, 120_000);
  const nightlyDone = await checkNightly(db, nightly, batch.requested, 600_000);
  const nightlyFigures = {
    ...batch,
    started_at_s: round((batchAt - loadStart) / 1000, 1),
    all_answered_at_s: await batchAnswered,
    checked_s_after_load: nightlyDone.waited_s,
  };
  const unpublishedRobo = await waitForOutbox(db, nightly.tenantId, 60_000);
  const answered500 = recorder.attempts.filter((a) => a.outcome.startsWith('500')).length;
  const checks: Check[] = [
    ...faultChecks(faults, perFault),
    ...(await checkDeposits(db, mw.tenantId, mw.ledger)),
    await checkPatches(db, mw.tenantId, mw.ledger),
    { name: 'the outbox drained', ok: unpublished + unpublishedRobo === 0, detail: `${unpublished + unpublishedRobo} events unpublished after the run` },
    await checkEvents(db, topology.natsUrl, mw.tenantId),
    await checkFeed(db, topology.managementUrl, await mw.accessToken(), mw.tenantId),
    await checkEvents(db, topology.natsUrl, nightly.tenantId),
    nightlyDone.check,
    { name: 'no answer outside the contract', ok: mw.ledger.anomalies.length === 0, detail: mw.ledger.anomalies.slice(0, 5).join('; ') || 'none' },
    { name: 'no 500 answer', ok: answered500 === 0, detail: `${answered500} answers 500` },
  ];
  for (const c of checks) log(`${c.ok ? 'ok' : 'FAILED'}: ${c.name}: ${c.detail}`);
  const whole = summarize(recorder, run.from, loadEnd);
  const totalSeconds = round((performance.now() - began) / 1000, 0);
  const acknowledged = {
    deposits: [...mw.ledger.deposits.values()].filter((d) => d.acked).length,
    patches: [...mw.ledger.patches.values()].reduce((n, p) => n + p.acked.length, 0),
  };

  const markdown = [
    '### Chaos of the production topology (`npm run bench:topology`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine **while other work shared it** (load average ${loadAverage} at the end of the load): the topology of \`npm run topology\` (Patroni with two Postgres 15 nodes and etcd, HAProxy on /primary; three NATS nodes, every stream in three copies; two management and two data replicas behind HAProxy in HTTP mode; optimizations on; a sample universe of 400 instruments over 2 years; \`DATABASE_POOL_MAX=${POOL_MAX}\` per management replica).`,
    `Load, open loop for ${round((loadEnd - loadStart) / 1000, 0)} s: the Client Middleware mix of \`npm run bench:load\` at ${RATE} req/s (${CLIENTS} virtual clients) through the client package, writes retried until acknowledged (deposits with the same Idempotency-Key) and reads retried too (no answer, 503, 429; back-off from 100 ms doubling to 2 s, for up to 120 s); an analyst at ${ANALYST_RATE} req/s on the data service (reference queries, the GLOBAL universe, its X-Ray stars, retried alike); and the robo nightly batch over ${NIGHTLY} portfolios, started 2 s into the load.`,
    `Faults one after the other, ${QUIET_SECONDS} s apart. A fault's window runs from ${LEAD_MS / 1000} s before it to ${LEAD_MS / 1000} s before the next; an operation counts as failed when it failed after every retry of the client package; "failures stopped after" is when the last failed attempt (retries included) of the window ended, from the fault; HAProxy's counters are per listener over the window.`,
    '',
    ...faultTable(perFault),
    '',
    `Over the load ${whole.total.count} attempts (retries included), p50 ${whole.total.p50_ms} ms, p99 ${whole.total.p99_ms} ms of those answered; ${acknowledged.deposits} deposits and ${acknowledged.patches} PATCHes acknowledged in the end; nightly batch: ${batch.requested} optimizations requested ${nightlyFigures.started_at_s} s into the load in ${round(batch.ms / 1000, 1)} s, every optimization of its tenant answered ${nightlyFigures.all_answered_at_s} s into the load.`,
    '',
    `Checks after the load stopped (${settled.deposits + settled.patches} writes still unanswered were sent again first, ${settled.unsettled} stayed unanswered):`,
    ...checks.map((c) => `- ${c.ok ? 'ok' : '**FAILED**'}: ${c.name}: ${c.detail}`),
    '',
    `The whole command took ${totalSeconds} s.`,
  ].join('\n');

  const allOk = checks.every((c) => c.ok);
  record(
    'topology',
    {
      date: new Date().toISOString(),
      load_average: loadAverage,
      rate: RATE,
      analyst_rate: ANALYST_RATE,
      quiet_seconds: QUIET_SECONDS,
      clients: CLIENTS,
      nightly_portfolios: NIGHTLY,
      pool_max: Number(POOL_MAX),
      weights: Object.fromEntries(Object.entries(OPERATIONS).map(([op, o]) => [op, o.weight])),
      faults: perFault,
      nightly: nightlyFigures,
      whole_run: whole,
      acknowledged,
      settled,
      checks,
      ok: allOk,
      total_seconds: totalSeconds,
    },
    markdown,
    {
      docs: `Chaos of the production topology (\`npm run bench:topology\`): replica kills, a rolling restart, a NATS node kill, a Postgres primary kill and stall under load, with failed requests, retries and recovery per fault in [bench/results/topology.md](../bench/results/topology.md) (${allOk ? 'every check met' : 'a check failed'} on ${new Date().toISOString().slice(0, 10)}; summary in docs/scaling.md).`,
    },
  );
  console.log(markdown);
  failed = !allOk;
  if (failed) process.exitCode = 1;
} finally {
  middleware?.stop();
  await db.destroy();
  await topology.stop();
  if (!failed) for (const folder of [dir, logs]) rmSync(folder, { recursive: true, force: true });
  else log(`the topology's data and the services' logs are kept in ${dir} and ${logs}`);
  log(`done in ${round((performance.now() - began) / 1000, 0)} s`);
}
