// Per fault of bench:topology, what the clients saw and what HAProxy did: operations that failed
// after the client package's retries, the retries the clients made, HAProxy's own retries and
// redispatches, the p99 of the answers, and the time until failures stopped; and the targets:
// no failed request for a replica kill, a rolling restart or a NATS node kill.
import type { HAProxyServerStats } from '@platform/dev-stack/haproxy';
import type { Check } from './consistency.ts';
import { round } from './harness.ts';
import type { OperationResult } from './middleware.ts';
import type { Attempt } from './open-loop.ts';
import type { FaultKind, FaultRecord } from './topology-faults.ts';

/** A failure due this long before a fault still counts for it (the request may have been in flight). */
export const LEAD_MS = 2000;
/** Faults where no client may see a failure: the platform has a second of each. */
const NO_FAILURE: FaultKind[] = ['management_kill', 'data_kill', 'rolling_restart', 'nats_kill'];
export const FAULT_NAMES: Record<FaultKind, string> = {
  management_kill: 'management replica SIGKILL',
  data_kill: 'data replica SIGKILL',
  rolling_restart: 'rolling restart of every replica',
  nats_kill: 'NATS meta leader SIGKILL',
  primary_kill: 'Postgres primary SIGKILL',
  primary_stall: 'Postgres primary SIGSTOP',
};

export type FaultFigures = {
  kind: FaultKind | 'none';
  action: string;
  at_s: number;
  back_after_s: number | null;
  operations: number;
  failed_operations: number;
  failed_by_outcome: Record<string, number>;
  client_retries: number;
  failed_attempts: number;
  recovery_s: number | null;
  p99_ms: number;
  max_ms: number;
  haproxy: Record<string, { retries: number; redispatches: number; responses5xx: number; connection_errors: number }>;
  figures: Record<string, number | string | null>;
};

const quantile = (sorted: number[], q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);

function proxyDelta(before: HAProxyServerStats[], after: HAProxyServerStats[]): FaultFigures['haproxy'] {
  const out: FaultFigures['haproxy'] = {};
  for (const a of after) {
    if (a.server === 'BACKEND' || a.server === 'FRONTEND') continue;
    const b = before.find((s) => s.listener === a.listener && s.server === a.server);
    const o = (out[a.listener] ??= { retries: 0, redispatches: 0, responses5xx: 0, connection_errors: 0 });
    o.retries += a.retries - (b?.retries ?? 0);
    o.redispatches += a.redispatches - (b?.redispatches ?? 0);
    o.responses5xx += a.responses5xx - (b?.responses5xx ?? 0);
    o.connection_errors += a.connectionErrors - (b?.connectionErrors ?? 0);
  }
  return out;
}

/** Each fault's window: from LEAD_MS before it to LEAD_MS before the next (the last: to the end of the load); and the quiet start before the first. */
export function faultFigures(options: {
  faults: FaultRecord[];
  statsAtEnd: HAProxyServerStats[];
  results: OperationResult[];
  attempts: Attempt[];
  loadStart: number;
  loadEnd: number;
}): FaultFigures[] {
  const { faults, results, attempts, loadStart, loadEnd } = options;
  const bounds = faults.map((f) => f.startAt - LEAD_MS);
  const windowOf = (at: number) => bounds.findLastIndex((b) => at >= b);
  const tokenOp = (op: string) => op === 'login' || op === 'refresh';
  const figuresOf = (i: number): FaultFigures => {
    const f = faults[i];
    const zero = f ? f.startAt : loadStart;
    const mine = results.filter((r) => r.dueAt < loadEnd && windowOf(r.dueAt) === i);
    const failed = mine.filter((r) => !r.ok);
    const byOutcome: Record<string, number> = {};
    for (const r of failed) byOutcome[r.outcome] = (byOutcome[r.outcome] ?? 0) + 1;
    const myAttempts = attempts.filter((a) => a.at < loadEnd && windowOf(a.at) === i && !tokenOp(a.op));
    const failedAttempts = myAttempts.filter((a) => a.outcome !== 'ok' && !a.outcome.startsWith('skipped')).sort((a, b) => a.at - b.at);
    const latencies = mine
      .filter((r) => r.ok)
      .map((r) => r.endedAt - r.dueAt)
      .sort((a, b) => a - b);
    const lastFailure = failedAttempts.at(-1);
    return {
      kind: f?.kind ?? 'none',
      action: f?.action ?? 'none: the quiet start',
      at_s: round((zero - loadStart) / 1000, 1),
      back_after_s: f ? round((f.readyAt - f.startAt) / 1000, 1) : null,
      operations: mine.length,
      failed_operations: failed.length,
      failed_by_outcome: byOutcome,
      client_retries: myAttempts.filter((a) => a.retry).length,
      failed_attempts: failedAttempts.length,
      // Until the last failed attempt ended: the failures stopped then.
      recovery_s: lastFailure ? round((lastFailure.at + lastFailure.ms - zero) / 1000, 1) : 0,
      p99_ms: quantile(latencies, 0.99),
      max_ms: round(latencies.at(-1) ?? 0),
      haproxy: f ? proxyDelta(f.statsBefore, faults[i + 1]?.statsBefore ?? options.statsAtEnd) : {},
      figures: f?.figures ?? {},
    };
  };
  return [figuresOf(-1), ...faults.map((_, i) => figuresOf(i))];
}

export function faultChecks(faults: FaultRecord[], figures: FaultFigures[]): Check[] {
  const zero = figures
    .filter((f) => (NO_FAILURE as string[]).includes(f.kind))
    .map((f) => ({
      name: `no failed client request (after the client package's retries): ${FAULT_NAMES[f.kind as FaultKind]}`,
      ok: f.failed_operations === 0,
      detail: `${f.failed_operations} of ${f.operations} operations failed${f.failed_operations ? ` (${JSON.stringify(f.failed_by_outcome)})` : ''}; ${f.client_retries} retries by the clients`,
    }));
  return [...zero, ...faults.flatMap((f) => f.checks)];
}

const outcomes = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([, a], [, b]) => b - a)
    .map(([o, n]) => `${o}: ${n}`)
    .join(', ') || '—';

export function faultTable(figures: FaultFigures[]): string[] {
  const proxy = (h: FaultFigures['haproxy']) =>
    Object.entries(h)
      .map(([l, c]) => `${l}: ${c.retries} / ${c.redispatches}`)
      .join('; ') || '—';
  const extra = (f: FaultFigures) =>
    Object.entries(f.figures)
      .map(([k, v]) => `${k.replaceAll('_', ' ')} ${v}`)
      .join('; ') || '';
  return [
    '| fault | at s | back after s | operations | failed after retries (by answer) | retries by the clients | failures stopped after s | p99 / max of the answers, ms | HAProxy retries / redispatches | measured |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...figures.map(
      (f) =>
        `| ${f.kind === 'none' ? f.action : FAULT_NAMES[f.kind]} | ${f.at_s} | ${f.back_after_s ?? ''} | ${f.operations} | ${f.failed_operations} (${outcomes(f.failed_by_outcome)}) | ${f.client_retries} | ${f.recovery_s ?? '—'} | ${f.p99_ms} / ${f.max_ms} | ${proxy(f.haproxy)} | ${extra(f)} |`,
    ),
  ];
}
