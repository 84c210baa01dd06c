// The overload steps of `npm run bench:load` (docs/adr/0062-overload-shedding.md): after the hold
// run, the same mix open loop at multiples of the highest rate held. Past capacity the services
// must answer the excess at once with 503 (or 429) and keep the requests they admit fast. Figures
// per step from every HTTP attempt the middleware made (first attempts and retries): the p99 of
// the admitted (answered 2xx), the p99 of the 503 answers, the share of 503 and 429 answers, and
// the failures that are neither (time-outs, 5xx other than 503, wrong answers).
import { round } from './harness.ts';
import type { Attempt, Recorder } from './open-loop.ts';

export const OVERLOAD_MULTIPLES = [1.5, 2];
export const TARGETS = { admittedP99Ms: 250, shedP99Ms: 10, otherFailures: 0 };

export type OverloadStep = {
  multiple: number;
  rate: number;
  seconds: number;
  attempts: number;
  admitted: number;
  admitted_rps: number;
  admitted_p50_ms: number;
  admitted_p99_ms: number;
  shed: number;
  shed_p50_ms: number;
  shed_p99_ms: number;
  shed_share: number;
  rate_limited: number;
  other_failures: number;
  other_failures_by_outcome: Record<string, number>;
  dropped: number;
  targets_met: boolean;
};

const quantile = (sorted: number[], q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
const sortedMs = (attempts: Attempt[]) => attempts.map((a) => a.ms).sort((a, b) => a - b);

/** The figures of one step from the attempts of the mix due in [from, to). */
export function overloadFigures(
  recorder: Recorder,
  run: { from: number; to: number; dropped: number },
  step: { multiple: number; rate: number; seconds: number },
  isMix: (op: string) => boolean,
): OverloadStep {
  const attempts = recorder.attempts.filter((a) => a.at >= run.from && a.at < run.to && isMix(a.op));
  const admitted = attempts.filter((a) => a.outcome === 'ok');
  const shed = attempts.filter((a) => a.outcome.startsWith('503'));
  const limited = attempts.filter((a) => a.outcome.startsWith('429'));
  const others = attempts.filter((a) => a.outcome !== 'ok' && !a.outcome.startsWith('503') && !a.outcome.startsWith('429'));
  const byOutcome: Record<string, number> = {};
  for (const a of others) byOutcome[a.outcome] = (byOutcome[a.outcome] ?? 0) + 1;
  const admittedMs = sortedMs(admitted);
  const shedMs = sortedMs(shed);
  const figures = {
    ...step,
    attempts: attempts.length,
    admitted: admitted.length,
    admitted_rps: round(admitted.length / step.seconds),
    admitted_p50_ms: quantile(admittedMs, 0.5),
    admitted_p99_ms: quantile(admittedMs, 0.99),
    shed: shed.length,
    shed_p50_ms: quantile(shedMs, 0.5),
    shed_p99_ms: quantile(shedMs, 0.99),
    shed_share: round(attempts.length ? (shed.length + limited.length) / attempts.length : 0, 3),
    rate_limited: limited.length,
    other_failures: others.length,
    other_failures_by_outcome: byOutcome,
    dropped: run.dropped,
  };
  const met = figures.admitted_p99_ms < TARGETS.admittedP99Ms && figures.shed_p99_ms < TARGETS.shedP99Ms && figures.other_failures <= TARGETS.otherFailures;
  return { ...figures, targets_met: met };
}

/** The steps' lines of the benchmark's page. */
export function overloadMarkdown(steps: OverloadStep[], held: number): string[] {
  if (steps.length === 0) return [];
  return [
    `**Past capacity** (docs/adr/0062-overload-shedding.md): the same mix at ${OVERLOAD_MULTIPLES.map((m) => `${m}×`).join(' and ')} the highest rate held (${held} req/s), ${steps[0]!.seconds} s each, right after the run above. ` +
      `Every HTTP attempt counts (writes shed are sent again by the client package after Retry-After). Targets: admitted p99 < ${TARGETS.admittedP99Ms} ms, 503 answers' p99 < ${TARGETS.shedP99Ms} ms, no failure other than 503/429. Latency counts from when a request was due, so the load generator's own lag on these shared cores is in it.`,
    '',
    '| step | req/s asked | attempts | admitted (2xx) req/s | admitted p50 / p99 ms | 503 answers | 503 p50 / p99 ms | 503 + 429 share | other failures | targets |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...steps.map(
      (s) =>
        `| ${s.multiple}× | ${s.rate} | ${s.attempts} | ${s.admitted_rps} | ${s.admitted_p50_ms} / ${s.admitted_p99_ms} | ${s.shed} | ${s.shed_p50_ms} / ${s.shed_p99_ms} | ${round(100 * s.shed_share, 1)} % | ${
          s.other_failures === 0
            ? '0'
            : `${s.other_failures} (${Object.entries(s.other_failures_by_outcome)
                .map(([o, n]) => `${o}: ${n}`)
                .join(', ')})`
        }${s.dropped ? `, ${s.dropped} not sent` : ''} | ${s.targets_met ? 'met' : '**not met**'} |`,
    ),
  ];
}
