import pg from 'pg';
import type { Logger } from '@platform/shared';
import { startTimedLoop } from './timed-loop.ts';

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
  const listener = new pg.Client({ connectionString: options.databaseUrl });
  listener.on('error', (error) => logger.warn(`${options.name} listener lost; polling only`, { error: error.message }));
  await listener.connect();
  await listener.query(`listen ${pg.escapeIdentifier(options.channel)}`);
  const loop = startTimedLoop({ name: options.name, everyMs: options.pollMs, logger, step: options.step, backoff: { baseMs: 250, maxMs: 5_000 } });
  listener.on('notification', () => loop.wake());
  return {
    stop: async () => {
      await loop.stop();
      await listener.end();
    },
  };
}
