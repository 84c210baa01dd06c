import fc from 'fast-check';
import type { FuzzOperation } from './operations.ts';
import type { FuzzRequest } from './requests.ts';

export type FuzzAnswer = { status: number; contentType: string; text: string; body: any };

export async function send(base: string, request: FuzzRequest): Promise<FuzzAnswer> {
  const res = await fetch(base + request.url, { method: request.method, headers: request.headers, body: request.body });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, body };
}

/** A short account of a request for an assertion message. */
export function describeRequest(request: FuzzRequest): string {
  const body =
    request.body === undefined
      ? ''
      : Buffer.isBuffer(request.body)
        ? `<${request.body.length} bytes>`
        : request.body.length > 300
          ? `${request.body.slice(0, 300)}… (${request.body.length} chars)`
          : request.body;
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([k]) => !/authorization|api-key/i.test(k)));
  return `${request.method} ${request.url.slice(0, 300)} ${JSON.stringify(headers)} ${JSON.stringify(body)}`;
}
/** The run's seed: FUZZ_SEED when given (to replay a failure), a fixed one otherwise. */
export const fuzzSeed = (): number => Number(process.env.FUZZ_SEED ?? 20261123);
/** Requests per operation: FUZZ_RUNS when given. */
export const fuzzRuns = (fallback: number): number => Number(process.env.FUZZ_RUNS ?? fallback);

const hash = (text: string): number => [...text].reduce((h, ch) => (Math.imul(h, 31) + ch.charCodeAt(0)) | 0, 0);

/**
 * Sends `runs` generated requests to the operation and fails with the smallest bad answer found,
 * the request that caused it, and how to replay it (the seed of an operation is the run's seed
 * mixed with its operationId, so FUZZ_SEED and --grep <operationId> replay one operation).
 */
export async function fuzzOperation(options: {
  base: string;
  op: FuzzOperation;
  requests: fc.Arbitrary<FuzzRequest>;
  check: (request: FuzzRequest, answer: FuzzAnswer) => string | undefined;
  seed: number;
  runs: number;
}): Promise<void> {
  const { base, op, requests, check, runs } = options;
  const seed = (options.seed ^ hash(op.operationId)) >>> 0;
  const statuses = new Map<number, number>();
  const result = await fc.check(
    fc.asyncProperty(requests, async (request) => {
      const answer = await send(base, request);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const problem = check(request, answer);
      if (problem) throw new Error(`${problem}\n  request: ${describeRequest(request)}`);
    }),
    { seed, numRuns: runs },
  );
  // FUZZ_STATS=1 shows how deep the requests got (how many passed validation).
  if (process.env.FUZZ_STATS)
    console.log(
      `      ${op.operationId}: ${[...statuses]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}×${n}`)
        .join(' ')}`,
    );
  if (result.failed) {
    const error = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    throw new Error(
      `${op.operationId} (${op.method} ${op.path}) failed with fast-check seed ${seed} (replay: FUZZ_SEED=${options.seed} npm test -- <this file> --grep ${op.operationId}):\n  ${error}`,
    );
  }
}
