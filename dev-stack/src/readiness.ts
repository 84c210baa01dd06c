import { waitFor } from './ports.ts';

/** Throws unless `url`'s GET /readyz answers 2xx now. */
export async function readyz(url: string): Promise<void> {
  const res = await fetch(`${url}/readyz`);
  if (!res.ok) throw new Error(`status ${res.status}`);
}

/** Resolves once `url`'s /readyz answers 2xx; `alive` throws to stop waiting for a service that ended. */
export function waitReady(name: string, url: string, timeoutMs: number, alive: () => void = () => undefined): Promise<void> {
  return waitFor(
    `${name} at ${url}/readyz`,
    async () => {
      alive();
      await readyz(url);
    },
    timeoutMs,
  );
}
