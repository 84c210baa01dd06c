/** A plain HTTP call for tests that need to send what no typed client would (bad JSON, wrong types). */
export async function call(
  url: string,
  init: { method?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string>; token?: string } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | Buffer | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
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
