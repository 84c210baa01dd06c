// The cost of an erasure (docs/adr/0059-personal-data-erasure.md) in bench:entities: users with
// many versions erased one after another through the interface, beside a PATCH of the same users.
import { median, round } from './harness.ts';

export type ErasureFigures = {
  users: number;
  versions_per_user: number;
  erase_p50_ms: number;
  erase_p90_ms: number;
  patch_p50_ms: number;
  erasures_per_s: number;
};

const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(0.9 * values.length) - 1]!;

/** `users` users of `versions` versions each, then each PATCHed once more and erased, timed one at a time. */
export async function measureErasure(baseUrl: string, headers: Record<string, string>, users = 200, versions = 20): Promise<ErasureFigures> {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as { id: string };
  };
  const ids: string[] = [];
  for (let u = 0; u < users; u++) {
    const tag = `${process.pid}-${u}`;
    const { id } = await call('POST', '/users/', {
      first_name: `Bench${u}`,
      last_name: `Erasure${u}`,
      email: `bench.erasure.${tag}@example.org`,
      phone: `+49170${String(1_000_000 + u)}${process.pid % 10}`,
      counter_account: { bank_account_number: 'DE89370400440532013000', bank_account_number_type: 'IBAN' },
    });
    for (let v = 2; v <= versions; v++) await call('PATCH', `/users/${id}`, { last_name: `Erasure${u}-${v}` });
    ids.push(id);
  }
  const timed = async (work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  const patches: number[] = [];
  for (const id of ids) patches.push(await timed(() => call('PATCH', `/users/${id}`, { language: 'de-DE' })));
  const erasures: number[] = [];
  const began = performance.now();
  for (const id of ids) erasures.push(await timed(() => call('POST', `/users/${id}/erasure/`)));
  const seconds = (performance.now() - began) / 1000;
  return {
    users,
    versions_per_user: versions + 1,
    erase_p50_ms: round(median(erasures)),
    erase_p90_ms: round(p90(erasures)),
    patch_p50_ms: round(median(patches)),
    erasures_per_s: round(users / seconds, 1),
  };
}
