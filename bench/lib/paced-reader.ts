// A client reading one URL at a pace, in a process of its own (forked by the benchmarks), so that
// what it measures is the service's answer and not the benchmark's own event loop, which also runs
// the clients that load the service. The parent sends `{ url, headers, everyMs }` to start and
// `'stop'` to end; the child answers `'reading'` once it reads, then with every request's time and
// the number of errors at the end, and exits.
import { setTimeout as sleep } from 'node:timers/promises';

type Start = { url: string; headers: Record<string, string>; everyMs: number };
export type PacedReadings = { times: number[]; errors: number };

/**
 * Reads `url` one request after the other, starting one every `everyMs` at most (right after the
 * previous one when that took longer), until stopped: each request's time from its start.
 */
export function pacedReader({ url, headers, everyMs }: Start): { stop: () => Promise<PacedReadings> } {
  const times: number[] = [];
  let errors = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const started = performance.now();
      try {
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        if (!res.ok) errors++;
      } catch {
        errors++;
      }
      const took = performance.now() - started;
      times.push(took);
      if (took < everyMs) await sleep(everyMs - took);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      return { times, errors };
    },
  };
}

if (process.send) {
  let running: ReturnType<typeof pacedReader> | undefined;
  process.on('message', (message: Start | 'stop') => {
    if (message !== 'stop') {
      running = pacedReader(message);
      process.send!('reading');
      return;
    }
    void running?.stop().then((readings) => process.send!(readings, () => process.exit(0)));
  });
}
