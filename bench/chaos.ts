// Chaos under load: the mixed Client Middleware load of bench/load.ts at a fixed moderate rate while
// the management service, the data service, nats-server and Postgres are each killed with SIGKILL
// and started again at once (same ports and data folders), one at a time with a quiet gap between.
// The middleware retries its writes until acknowledged (deposits with the same Idempotency-Key).
// Afterwards, once the writes are settled and the outbox drained: every acknowledged write is there,
// every outbound event is in JetStream exactly once, Σ cash = Σ acknowledged deposits; and per fault
// the error window (first to last failed request around it) and the failures by status. Exits 1
// when a check fails (docs/adr/0033-load-and-chaos-benchmarks.md). `npm run bench:chaos`
// (BENCH_RATE, BENCH_QUIET_SECONDS, BENCH_CLIENTS change the 50 req/s, 15 s and 100;
// BENCH_DOWN_SECONDS keeps each killed component down that long before it starts again).
import { readFileSync } from 'node:fs';
import { checkDeposits, checkEvents, checkPatches, waitForOutbox, type Check } from './lib/consistency.ts';
import { record, round } from './lib/harness.ts';
import { OPERATIONS, startMiddleware, type Middleware } from './lib/middleware.ts';
import { Recorder, runOpenLoop, summarize, type Attempt } from './lib/open-loop.ts';
import { startStack, type Component } from './lib/stack.ts';

const RATE = Number(process.env.BENCH_RATE ?? 50);
const QUIET_SECONDS = Number(process.env.BENCH_QUIET_SECONDS ?? 15);
/** How long a killed component stays down before it is started again (0: at once, as a supervisor would). */
const DOWN_SECONDS = Number(process.env.BENCH_DOWN_SECONDS ?? 0);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 100);
const FAULTS: Component[] = ['management', 'data', 'nats', 'postgres'];
const NAMES: Record<Component, string> = { management: 'management service', data: 'data service', nats: 'nats-server', postgres: 'Postgres' };
/** A failure due this long before a kill still counts for that kill (the request may have been in flight). */
const LEAD_MS = 2000;
/** An answer slower than this counts as slow (a middleware with a 1 s time-out would have failed it). */
const SLOW_MS = 1000;

const began = performance.now();
const log = (line: string) => console.log(`[bench ${round((performance.now() - began) / 1000, 1)} s] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const stack = await startStack({ log, management: { DATABASE_POOL_MAX: '20' }, data: { SAMPLE_YEARS: '2' } });
let middleware: Middleware | undefined;
let failed = true;
try {
  const recorder = new Recorder();
  middleware = await startMiddleware({
    db: stack.db,
    managementUrl: stack.managementUrl,
    dataUrl: stack.dataUrl,
    recorder,
    clients: CLIENTS,
    retryForMs: 120_000,
    log,
  });
  const mw = middleware;

  log(`load at ${RATE} req/s; ${FAULTS.map((c) => NAMES[c]).join(', ')} killed one after the other, ${QUIET_SECONDS} s apart`);
  const stopLoad = new AbortController();
  const loadStart = recorder.now();
  const loading = runOpenLoop({ recorder, rate: RATE, seconds: 3600, maxInFlight: 5000, issue: mw.operate, signal: stopLoad.signal });
  loading.catch(() => undefined);
  type Fault = { component: Component; killed_at_s: number; ready_after_s: number; killAt: number };
  const faults: Fault[] = [];
  try {
    await sleep(QUIET_SECONDS * 1000);
    for (const component of FAULTS) {
      const killAt = recorder.now();
      await stack.kill(component);
      log(`killed ${NAMES[component]} (SIGKILL); starting it again${DOWN_SECONDS ? ` in ${DOWN_SECONDS} s` : ''}`);
      await sleep(DOWN_SECONDS * 1000);
      await stack.restart(component);
      const readyAfter = (recorder.now() - killAt) / 1000;
      log(`${NAMES[component]} ready again ${round(readyAfter, 1)} s after the kill`);
      faults.push({ component, killed_at_s: round((killAt - loadStart) / 1000, 1), ready_after_s: round(readyAfter, 1), killAt });
      await sleep(QUIET_SECONDS * 1000);
    }
  } finally {
    stopLoad.abort();
  }
  const loadAverage = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
  log('load stopped; waiting for the writes still being retried');
  const run = await loading;

  // Each failed request belongs to the last kill at most LEAD_MS after it was sent.
  const failures = recorder.attempts.filter((a) => a.outcome !== 'ok' && !a.outcome.startsWith('skipped'));
  const segmentOf = (a: Attempt) => faults.findLastIndex((f) => a.at >= f.killAt - LEAD_MS);
  /** Segment i: from LEAD_MS before kill i to LEAD_MS before the next; -1: before the first kill. */
  const segment = (i: number) => {
    const zero = i >= 0 ? faults[i]!.killAt : loadStart;
    const after = (a: Attempt) => round((a.at - zero) / 1000, 1);
    const mine = failures.filter((a) => segmentOf(a) === i).sort((a, b) => a.at - b.at);
    const byOutcome: Record<string, number> = {};
    const byOp: Record<string, number> = {};
    for (const a of mine) {
      byOutcome[a.outcome] = (byOutcome[a.outcome] ?? 0) + 1;
      byOp[a.op] = (byOp[a.op] ?? 0) + 1;
    }
    // Answered but slow: longer than SLOW_MS.
    const answered = recorder.attempts.filter((a) => a.outcome === 'ok' && segmentOf(a) === i).sort((a, b) => a.at - b.at);
    const slow = answered.filter((a) => a.ms > SLOW_MS);
    const latencies = answered.map((a) => a.ms).sort((a, b) => a - b);
    return {
      failed_requests: mine.length,
      error_window_s: mine.length ? round((mine.at(-1)!.at - mine[0]!.at) / 1000, 1) : 0,
      first_failure_after_kill_s: mine.length ? after(mine[0]!) : null,
      last_failure_after_kill_s: mine.length ? after(mine.at(-1)!) : null,
      by_outcome: byOutcome,
      by_operation: byOp,
      answered: answered.length,
      answered_p99_ms: round(latencies[Math.floor(0.99 * latencies.length)] ?? 0),
      answered_max_ms: round(latencies.at(-1) ?? 0),
      slow_answers: slow.length,
      slow_first_after_kill_s: slow.length ? after(slow[0]!) : null,
      slow_last_after_kill_s: slow.length ? after(slow.at(-1)!) : null,
    };
  };
  const windows = faults.map((f, i) => ({ component: f.component, killed_at_s: f.killed_at_s, ready_after_s: f.ready_after_s, ...segment(i) }));
  const quiet = segment(-1);
  // How long the events of each segment waited in the outbox before JetStream took them: median and longest.
  const wall = (at: number) => new Date(recorder.startedAt + at);
  const publishDelay = async (from: number, to: number) => {
    const row = (await stack
      .db('outbox')
      .where({ tenant_id: mw.tenantId })
      .whereNull('nats_subject')
      .where('created_at', '>=', wall(from))
      .where('created_at', '<', wall(to))
      .select(
        stack.db.raw('percentile_cont(0.5) within group (order by extract(epoch from published_at - created_at)) as median'),
        stack.db.raw('max(extract(epoch from published_at - created_at)) as longest'),
      )
      .first()) as { median: string | null; longest: string | null };
    return row.longest === null ? null : { median_ms: round(1000 * Number(row.median), 0), longest_s: round(Number(row.longest), 1) };
  };
  for (const w of windows) log(`${NAMES[w.component]}: ${JSON.stringify(w)}`);

  log('settling unanswered writes, waiting for the outbox');
  const settled = await mw.settle(90_000);
  const unpublished = await waitForOutbox(stack.db, mw.tenantId, 120_000);
  const checks: Check[] = [
    ...(await checkDeposits(stack.db, mw.tenantId, mw.ledger)),
    await checkPatches(stack.db, mw.tenantId, mw.ledger),
    { name: 'the outbox drained', ok: unpublished === 0, detail: `${unpublished} events unpublished 120 s after the run` },
    await checkEvents(stack.db, stack.natsUrl, mw.tenantId),
    { name: 'no answer outside the contract', ok: mw.ledger.anomalies.length === 0, detail: mw.ledger.anomalies.slice(0, 5).join('; ') || 'none' },
    {
      name: 'no 500 answer',
      ok: !failures.some((a) => a.outcome.startsWith('500')),
      detail: `${failures.filter((a) => a.outcome.startsWith('500')).length} answers 500`,
    },
  ];
  for (const c of checks) log(`${c.ok ? 'ok' : 'FAILED'}: ${c.name}: ${c.detail}`);
  const segmentEnds = [...faults.slice(1).map((f) => f.killAt - LEAD_MS), run.to];
  const eventDelays = await Promise.all(faults.map((f, i) => publishDelay(f.killAt - LEAD_MS, segmentEnds[i]!)));
  const quietDelay = faults.length ? await publishDelay(loadStart, faults[0]!.killAt - LEAD_MS) : null;
  const allOk = checks.every((c) => c.ok);
  const whole = summarize(recorder, run.from, run.to);
  const totalSeconds = round((performance.now() - began) / 1000, 0);

  const outcomes = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort(([, a], [, b]) => b - a)
      .map(([o, n]) => `${o}: ${n}`)
      .join(', ') || '—';
  const markdown = [
    '### Chaos under load (`npm run bench:chaos`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine **while other work shared it** (load average ${loadAverage} at the end); the processes and mix of \`npm run bench:load\`, open loop at a fixed ${RATE} req/s for ${round((run.to - run.from) / 1000, 0)} s.`,
    `After ${QUIET_SECONDS} s each component in turn is killed with SIGKILL (Postgres: the postmaster and every backend, as when its container dies) and started again ${DOWN_SECONDS ? `${DOWN_SECONDS} s later` : 'at once'} on the same port and data folder (nats-server with its JetStream folder), ${QUIET_SECONDS} s apart.`,
    'The middleware retries deposits with the same Idempotency-Key and body and PATCHes with the same value until answered (through the client package: back-off with full jitter from 100 ms doubling to 2 s, or as long as Retry-After says); reads are not retried.',
    'Error window: from the first to the last failed request (by when it was sent) from 2 s before the kill until 2 s before the next one; answers slower than 1 s are counted beside it. The wait of an event: from the change that wrote it to its publication to JetStream, over the events written in the same span.',
    '',
    '| killed | at s | answering again after s | failed requests | error window s | first / last failure after the kill, s | failures by answer | answers > 1 s (first / last after the kill, s) | p99 / max of the answers, ms | wait of an event in the outbox: median / longest |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...[...windows, { component: undefined, killed_at_s: 0, ready_after_s: undefined, ...quiet }].map((w, i) =>
      [
        w.component ? NAMES[w.component] : `(none: the first ${QUIET_SECONDS} s)`,
        w.killed_at_s,
        w.ready_after_s ?? '',
        w.failed_requests,
        w.error_window_s,
        `${w.first_failure_after_kill_s ?? '—'} / ${w.last_failure_after_kill_s ?? '—'}`,
        outcomes(w.by_outcome),
        w.slow_answers ? `${w.slow_answers} (${w.slow_first_after_kill_s} / ${w.slow_last_after_kill_s})` : '0',
        `${w.answered_p99_ms} / ${w.answered_max_ms}`,
        ((d) => (d ? `${d.median_ms} ms / ${d.longest_s} s` : '—'))(i < windows.length ? eventDelays[i] : quietDelay),
      ]
        .join(' | ')
        .replace(/^/, '| ')
        .concat(' |'),
    ),
    '',
    `Failed requests by operation: ${windows.map((w) => `${NAMES[w.component]}: ${outcomes(w.by_operation)}`).join('; ')}.`,
    `Over the whole run ${whole.total.count} requests, p50 ${whole.total.p50_ms} ms, p99 ${whole.total.p99_ms} ms of those answered; ${[...mw.ledger.deposits.values()].filter((d) => d.acked).length} deposits and ${[...mw.ledger.patches.values()].reduce((n, p) => n + p.acked.length, 0)} PATCHes acknowledged in the end.`,
    '',
    `Checks after the load stopped (${settled.deposits + settled.patches} writes still unanswered were sent again first, ${settled.unsettled} stayed unanswered):`,
    ...checks.map((c) => `- ${c.ok ? 'ok' : '**FAILED**'}: ${c.name}: ${c.detail}`),
    '',
    `The whole command took ${totalSeconds} s.`,
  ].join('\n');

  record(
    'chaos',
    {
      date: new Date().toISOString(),
      rate: RATE,
      quiet_seconds: QUIET_SECONDS,
      down_seconds: DOWN_SECONDS,
      load_average_1min: Number(loadAverage),
      clients: CLIENTS,
      weights: Object.fromEntries(Object.entries(OPERATIONS).map(([op, o]) => [op, o.weight])),
      faults: windows.map((w, i) => ({ ...w, event_wait: eventDelays[i] })),
      event_wait_before_faults: quietDelay,
      before_faults: quiet,
      whole_run: whole,
      settled,
      checks,
      total_seconds: totalSeconds,
    },
    markdown,
  );
  console.log(markdown);
  failed = !allOk;
  if (failed) process.exitCode = 1;
} finally {
  middleware?.stop();
  await stack.stop({ keep: failed });
  log(`done in ${round((performance.now() - began) / 1000, 0)} s`);
}
