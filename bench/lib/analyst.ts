// An analyst's load on the data service beside the Client Middleware: reference queries, universe
// reads and X-Ray scores of GLOBAL in turn, each GET or query retried by the client package's rule
// (decideRetry: no answer, 503, 429) as an analyst's tool built on it would. Every attempt goes to
// the recorder; how each call ended goes to `results`, as the middleware's operations do.
import { decideRetry, type RetryPolicy } from '@platform/client';
import type { OperationResult } from './middleware.ts';
import { referenceBody, universeQuery, xrayQuery, JSON_TYPE } from './data-queries.ts';
import type { Recorder } from './open-loop.ts';

export const ANALYST_OPERATIONS = ['analyst_reference', 'analyst_universe', 'analyst_xray'] as const;
type AnalystOperation = (typeof ANALYST_OPERATIONS)[number];

const REQUEST_TIMEOUT_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function analystLoad(options: {
  dataUrl: string;
  tenantId: string;
  apiKey: string;
  isins: string[];
  recorder: Recorder;
  policy: RetryPolicy;
  random: () => number;
}): { results: OperationResult[]; operate: (i: number, dueAt: number) => Promise<void> } {
  const { dataUrl, recorder, policy, random, isins } = options;
  const headers = { 'x-tenant-id': options.tenantId, 'x-api-key': options.apiKey, accept: JSON_TYPE, 'content-type': JSON_TYPE };
  const results: OperationResult[] = [];

  const request = (op: AnalystOperation, i: number): { path: string; method: string; body?: string } => {
    if (op === 'analyst_universe') return { method: 'GET', path: `/data/reference/universe/${universeQuery}` };
    if (op === 'analyst_xray') return { method: 'GET', path: `/xray/universe/${xrayQuery}` };
    const n = 10 + (i % 41);
    const from = (i * 37) % Math.max(1, isins.length - n);
    return { method: 'POST', path: '/data/reference/query/', body: JSON.stringify(referenceBody(isins.slice(from, from + n))) };
  };

  const operate = async (i: number, dueAt: number) => {
    const op = ANALYST_OPERATIONS[i % ANALYST_OPERATIONS.length]!;
    const { method, path, body } = request(op, i);
    // A reference query reads only; the data service answers it alike however often it is sent.
    const retryAs = method === 'POST' ? 'GET' : method;
    let outcome: string;
    for (let attempt = 1; ; attempt++) {
      const at = attempt === 1 ? dueAt : recorder.now();
      let status: number | undefined;
      let retryAfter: string | null = null;
      try {
        const response = await fetch(`${dataUrl}${path}`, { method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const text = await response.text();
        status = response.status;
        retryAfter = response.headers.get('retry-after');
        outcome = response.ok && (op !== 'analyst_reference' || Object.keys((JSON.parse(text) as { data: object }).data).length > 0) ? 'ok' : `${status}`;
      } catch (error) {
        const e = error as { name?: string; cause?: { code?: string } };
        outcome = e.name === 'TimeoutError' ? 'timeout' : (e.cause?.code ?? e.name ?? 'error');
      }
      recorder.add({ op, at, ms: recorder.now() - at, outcome, retry: attempt > 1 });
      if (outcome === 'ok') break;
      const decision = decideRetry({
        attempt,
        method: retryAs,
        keyed: false,
        outcome: status === undefined ? { networkError: true } : { status, retryAfter },
        elapsedMs: recorder.now() - dueAt,
        now: Date.now(),
        policy,
        random,
      });
      if (!decision.retry) break;
      await sleep(decision.delayMs);
    }
    results.push({ op, dueAt, endedAt: recorder.now(), ok: outcome === 'ok', outcome });
  };
  return { results, operate };
}
