import { ProblemError } from '../problem.ts';
import type { HandlerResult, ReadinessChecks } from './app-options.ts';

/** The answer of /readyz: 200 when every check resolves (`degraded` when one says so), 503 naming those that fail. */
export async function readiness(checks: ReadinessChecks): Promise<HandlerResult> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        return [name, (await check()) === 'degraded' ? 'degraded' : 'ok'] as const;
      } catch {
        return [name, 'failing'] as const;
      }
    }),
  );
  const summary = Object.fromEntries(results);
  const failing = results.filter(([, state]) => state === 'failing').map(([name]) => name);
  if (failing.length === 0) return { status: 200, body: { status: results.some(([, state]) => state === 'degraded') ? 'degraded' : 'ok', checks: summary } };
  throw new ProblemError(503, 'unavailable', `Not ready: ${failing.join(', ')} not answering.`, { checks: summary });
}
