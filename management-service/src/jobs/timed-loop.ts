import type { Logger } from '@platform/shared';

export type TimedLoopOptions = {
  name: string;
  /** Pause between rounds when there is nothing more to do. */
  everyMs: number;
  logger: Logger;
  /** One round of work; true when there may be more right away. */
  step: () => Promise<boolean>;
  /** Back-off while steps fail: `baseMs` doubling up to `maxMs` (default everyMs up to 30 s). */
  backoff?: { baseMs: number; maxMs: number };
};

export type TimedLoop = {
  /** Runs the next round now; a wake during a round runs another right after it. */
  wake: () => void;
  /** Stops, waiting for a round in progress. */
  stop: () => Promise<void>;
};

/** Runs `step` every `everyMs` (at once again while it says there is more, or when woken), backing off while it fails. */
export function startTimedLoop(options: TimedLoopOptions): TimedLoop {
  const backoff = options.backoff ?? { baseMs: options.everyMs, maxMs: 30_000 };
  let running = true;
  let woken = false;
  let endPause: () => void = () => undefined;
  let failures = 0;
  const loop = (async () => {
    while (running) {
      woken = false;
      let more = false;
      try {
        more = await options.step();
        failures = 0;
      } catch (error) {
        failures++;
        options.logger.warn(`${options.name} failed; retrying`, { error: (error as Error).message, failures });
      }
      if (failures === 0 && (more || woken)) continue;
      const delay = failures > 0 ? Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(failures, 5)) : options.everyMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        endPause = () => {
          clearTimeout(timer);
          resolve();
        };
        if (!running) endPause();
      });
    }
  })();
  return {
    wake: () => {
      woken = true;
      endPause();
    },
    stop: async () => {
      running = false;
      endPause();
      await loop;
    },
  };
}
