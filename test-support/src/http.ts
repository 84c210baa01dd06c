import { request } from 'node:http';

/**
 * A plain HTTP call for tests that need to send what no typed client would (bad JSON, wrong types).
 * `from` is the local address the connection leaves from (any of 127.0.0.0/8 reaches a loopback
 * listener on Linux): a client at another address, as the service sees it, without X-Forwarded-For.
 */
export async function call(
  url: string,
  init: { method?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string>; token?: string; from?: string } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | Buffer | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const method = init.method ?? (body === undefined ? 'GET' : 'POST');
  const res = init.from === undefined ? await fetch(url, { method, headers, body }) : await callFrom(init.from, url, method, headers, body);
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Asserts the shape every error answer has, and that it leaks nothing internal. */
export function assertProblem(res: { status: number; headers: Headers; body: any; text: string }, status: number, code: string): void {
  const b = res.body;
  const ok =
    res.status === status &&
    res.headers.get('content-type')?.startsWith('application/problem+json') === true &&
    b?.status === status &&
    b?.code === code &&
    typeof b?.title === 'string' &&
    typeof b?.detail === 'string' &&
    typeof b?.request_id === 'string' &&
    !/\bat .+\.(ts|js):\d+|select |insert |node_modules/i.test(res.text);
  if (!ok) throw new Error(`expected a ${status} ${code} problem, got ${res.status}: ${res.text.slice(0, 500)}`);
}

/** One request over node:http from a given local address, answered as fetch would. */
function callFrom(localAddress: string, url: string, method: string, headers: Record<string, string>, body: string | Buffer | undefined): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, one);
        }
        const status = res.statusCode ?? 0;
        // fetch's Response refuses a body, even an empty one, on these statuses.
        const bodyless = [101, 204, 205, 304].includes(status);
        resolve(new Response(bodyless ? null : Buffer.concat(chunks), { status, headers: answer }));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
