// An open-loop load driver: operations start at a fixed rate whatever the answers take (a slow
// answer does not hold back the next request, as it would in a closed loop), and each request's
// latency counts from the moment it was due, so that a lagging driver shows as latency too.
// Every HTTP attempt is recorded with its time and outcome, for summaries per operation and for
// the error windows of a chaos run.
import { round } from './harness.ts';

/** One HTTP request: `at` ms since the recorder started (when it was due), its latency, and `ok` or what went wrong. */
export type Attempt = { op: string; at: number; ms: number; outcome: string; retry: boolean };

export class Recorder {
  readonly started = performance.now();
  /** The wall-clock time of `started`, to compare with times the services wrote. */
  readonly startedAt = Date.now();
  readonly attempts: Attempt[] = [];
  now(): number {
    return performance.now() - this.started;
  }
  add(attempt: Attempt): void {
    this.attempts.push(attempt);
  }
}

export type OpFigures = {
  count: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  errors: number;
  errors_by_outcome: Record<string, number>;
};

const quantile = (sorted: number[], q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);

function figures(attempts: Attempt[], seconds: number): OpFigures {
  const latencies = attempts.filter((a) => a.outcome === 'ok').map((a) => a.ms);
  latencies.sort((a, b) => a - b);
  const errorsByOutcome: Record<string, number> = {};
  for (const a of attempts) if (a.outcome !== 'ok') errorsByOutcome[a.outcome] = (errorsByOutcome[a.outcome] ?? 0) + 1;
  return {
    count: attempts.length,
    rps: round(latencies.length / seconds),
    p50_ms: quantile(latencies, 0.5),
    p99_ms: quantile(latencies, 0.99),
    max_ms: round(latencies.at(-1) ?? 0),
    errors: attempts.length - latencies.length,
    errors_by_outcome: errorsByOutcome,
  };
}

/** Figures of the attempts of the operations `included` accepts (default: all) due in [from, to) ms: per operation and all together. */
export function summarize(
  recorder: Recorder,
  from: number,
  to: number,
  included: (op: string) => boolean = () => true,
): { total: OpFigures; ops: Record<string, OpFigures> } {
  const seconds = (to - from) / 1000;
  const inWindow = recorder.attempts.filter((a) => a.at >= from && a.at < to && included(a.op));
  const ops: Record<string, OpFigures> = {};
  for (const op of [...new Set(inWindow.map((a) => a.op))].sort()) {
    ops[op] = figures(
      inWindow.filter((a) => a.op === op),
      seconds,
    );
  }
  return { total: figures(inWindow, seconds), ops };
}

/**
 * Starts `issue(i, dueAt)` `rate` times a second for `seconds`, evenly spaced, never waiting for
 * answers; at most `maxInFlight` at once (a start beyond is counted in `dropped`). Resolves when the
 * last one has settled; rejects with the first error an `issue` threw.
 */
export async function runOpenLoop(options: {
  recorder: Recorder;
  rate: number;
  seconds: number;
  maxInFlight: number;
  issue: (i: number, dueAt: number) => Promise<void>;
  /** Stops starting operations before `seconds` have passed. */
  signal?: AbortSignal;
}): Promise<{ from: number; to: number; started: number; dropped: number; maxLagMs: number }> {
  const { recorder, rate, seconds } = options;
  const from = recorder.now();
  const total = Math.round(rate * seconds);
  const inFlight = new Set<Promise<void>>();
  let next = 0;
  let dropped = 0;
  let maxLagMs = 0;
  let failure: unknown;
  while (next < total && !options.signal?.aborted) {
    const now = recorder.now();
    for (; next < total && from + (next * 1000) / rate <= now; next++) {
      const due = from + (next * 1000) / rate;
      maxLagMs = Math.max(maxLagMs, now - due);
      if (inFlight.size >= options.maxInFlight) {
        dropped++;
        continue;
      }
      const running: Promise<void> = options
        .issue(next, due)
        .catch((error: unknown) => void (failure ??= error))
        .finally(() => inFlight.delete(running));
      inFlight.add(running);
    }
    const wait = from + (next * 1000) / rate - recorder.now();
    await new Promise((r) => setTimeout(r, Math.max(1, Math.min(wait, 20))));
  }
  const to = options.signal?.aborted ? recorder.now() : from + seconds * 1000;
  await Promise.all(inFlight);
  // A request's failure is an outcome the operation records; a throw here is a fault of the benchmark.
  if (failure) throw failure;
  return { from, to, started: next - dropped, dropped, maxLagMs: round(maxLagMs) };
}
