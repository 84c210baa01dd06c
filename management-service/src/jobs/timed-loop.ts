import type { Logger } from '@platform/shared';

/**
 * Runs `step` every `everyMs` (at once again while it says there is more), backing off while it fails; stop() waits
 * for a step in progress.
 */
export function startTimedLoop(options: { name: string; everyMs: number; logger: Logger; step: () => Promise<boolean> }): { stop: () => Promise<void> } {
  let running = true;
  let wake: () => void = () => undefined;
  let failures = 0;
  const loop = (async () => {
    while (running) {
      let more = false;
      try {
        more = await options.step();
        failures = 0;
      } catch (error) {
        failures++;
        options.logger.warn(`${options.name} failed; retrying`, { error: (error as Error).message, failures });
      }
      if (more && failures === 0) continue;
      const delay = failures > 0 ? Math.min(30_000, options.everyMs * 2 ** Math.min(failures, 5)) : options.everyMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (!running) wake();
      });
    }
  })();
  return {
    stop: async () => {
      running = false;
      wake();
      await loop;
    },
  };
}
