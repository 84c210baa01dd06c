// A client of the topology's two HAProxy listeners, as an integrator's would behave: plain HTTP
// calls, a failed request sent again, a 429 waited out. The test-support package starts its
// platform through the dev stack, so its helpers are not used here.
import type { HAProxyServerStats } from '@platform/dev-stack/haproxy';

export type Answer = { status: number; body: any; text: string; headers: Headers; retryAfter: number };

export async function call(url: string, init: { method?: string; body?: unknown; headers?: Record<string, string>; token?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const method = init.method ?? (init.body === undefined ? 'GET' : 'POST');
  const res = await fetch(url, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, headers: res.headers, retryAfter: Number(res.headers.get('retry-after') ?? '1') };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// A status a client sends again (the client package's rule): the proxy found no replica, or it failed.
const retryable = (status: number) => status === 502 || status === 503 || status === 504;

export type Load = { requests: number; failures: string[]; retries: number; rateLimited: number; maxLatencyMs: number };
/** One request of a client: sent again as it is (a POST with the same Idempotency-Key, so that it takes effect once). */
export type ClientRequest = { method: string; url: string; body?: unknown; headers: Record<string, string>; token?: string };

/**
 * Clients that each send their next request as soon as the last one is answered, until `until`
 * settles. A failed request (no answer, or 502/503/504) is sent again up to 3 times; a 429 is
 * waited out for its Retry-After, which is no failure of the topology.
 */
export async function steadyLoad(clients: (() => ClientRequest)[], until: Promise<unknown>): Promise<Load> {
  const load: Load = { requests: 0, failures: [], retries: 0, rateLimited: 0, maxLatencyMs: 0 };
  let done = false;
  void until.finally(() => (done = true));
  const send = async (request: ClientRequest) => {
    const { method, url } = request;
    const what = `${method} ${new URL(url).pathname}`;
    const started = Date.now();
    let last = '';
    for (let attempt = 0; attempt < 4; attempt++) {
      if (attempt > 0) {
        load.retries++;
        await sleep(200 * attempt);
      }
      try {
        let res = await call(url, request);
        for (let limited = 0; res.status === 429 && limited < 10; limited++) {
          load.rateLimited++;
          await sleep(res.retryAfter * 1000);
          res = await call(url, request);
        }
        if (!retryable(res.status)) {
          last = res.status >= 400 ? `${what}: ${res.status} ${res.text}` : '';
          break;
        }
        last = `${what}: ${res.status}`;
      } catch (error) {
        last = `${what}: ${(error as Error).message}`;
      }
    }
    load.requests++;
    load.maxLatencyMs = Math.max(load.maxLatencyMs, Date.now() - started);
    if (last) load.failures.push(last);
  };
  await Promise.all(
    clients.map(async (next) => {
      while (!done) await send(next());
    }),
  );
  return load;
}

export const describeLoad = (load: Load) =>
  `${load.requests} requests, ${load.failures.length} failed, ${load.retries} sent again by the client, ${load.rateLimited} waited out a 429, slowest ${load.maxLatencyMs} ms`;

/** What HAProxy counted for each server of `listener` between two readings of its counters. */
export function countedBetween(before: HAProxyServerStats[], after: HAProxyServerStats[], listener: string) {
  return after
    .filter((s) => s.listener === listener)
    .map((s) => {
      const earlier = before.find((b) => b.listener === s.listener && b.server === s.server);
      const since = (field: 'retries' | 'redispatches' | 'sessions' | 'connectionErrors' | 'responseErrors') => s[field] - (earlier?.[field] ?? 0);
      return {
        server: s.server,
        retries: since('retries'),
        redispatches: since('redispatches'),
        sessions: since('sessions'),
        connectionErrors: since('connectionErrors'),
        responseErrors: since('responseErrors'),
      };
    });
}
