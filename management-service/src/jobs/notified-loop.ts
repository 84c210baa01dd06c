import pg from 'pg';
import type { Logger } from '@platform/shared';

export type NotifiedLoopOptions = {
  name: string;
  databaseUrl: string;
  /** The Postgres NOTIFY channel that wakes the loop. */
  channel: string;
  pollMs: number;
  logger: Logger;
  /** One round of work; true when there may be more right away. */
  step: () => Promise<boolean>;
};

/**
 * Runs `step` whenever Postgres signals new work on `channel`, polling as a fallback, and backing
 * off exponentially while it fails. A NOTIFY that arrives during a step is remembered, not lost.
 */
export async function startNotifiedLoop(options: NotifiedLoopOptions): Promise<{ stop: () => Promise<void> }> {
  const { logger } = options;
  let running = true;
  let notified = false;
  let wake: () => void = () => undefined;
  const listener = new pg.Client({ connectionString: options.databaseUrl });
  listener.on('notification', () => {
    notified = true;
    wake();
  });
  listener.on('error', (error) => logger.warn(`${options.name} listener lost; polling only`, { error: error.message }));
  await listener.connect();
  await listener.query(`listen ${pg.escapeIdentifier(options.channel)}`);

  let failures = 0;
  const loop = (async () => {
    while (running) {
      notified = false;
      let more = false;
      try {
        more = await options.step();
        failures = 0;
      } catch (error) {
        failures++;
        logger.warn(`${options.name} failed; retrying`, { error: (error as Error).message, failures });
      }
      if (failures === 0 && (more || notified)) continue;
      const delay = failures > 0 ? Math.min(5_000, 250 * 2 ** Math.min(failures, 5)) : options.pollMs;
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
      await listener.end();
    },
  };
}
