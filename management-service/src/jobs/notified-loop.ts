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
  /** Pause before listening again after the listener's connection was lost: doubling from `baseMs` up to `maxMs`. */
  relisten?: { baseMs: number; maxMs: number };
};

/**
 * Runs `step` whenever Postgres signals new work on `channel`, polling as a fallback, and backing
 * off exponentially while it fails. A NOTIFY that arrives during a step is remembered, not lost.
 * When the listener's connection is lost (Postgres restarted, the connection cut), the loop polls
 * while a new listener connects, and runs a round once it listens again (a NOTIFY sent meanwhile
 * went nowhere).
 */
export async function startNotifiedLoop(options: NotifiedLoopOptions): Promise<{ stop: () => Promise<void> }> {
  const { logger } = options;
  const relisten = options.relisten ?? { baseMs: 500, maxMs: 10_000 };
  // Wakes the loop once it runs (it starts after the first listener listens, so no NOTIFY falls between).
  let wake: () => void = () => undefined;
  let listener: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const listen = async () => {
    const client = new pg.Client({ connectionString: options.databaseUrl });
    // Connecting fails through the promise; afterwards an error or the end means the connection is gone.
    client.on('error', (error) => lost(client, error));
    client.on('end', () => lost(client));
    client.on('notification', () => wake());
    try {
      await client.connect();
      await client.query(`listen ${pg.escapeIdentifier(options.channel)}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    listener = client;
  };
  const again = (delayMs: number) => {
    retry = setTimeout(() => {
      listen().then(
        () => {
          if (stopped) return void listener?.end().catch(() => undefined);
          logger.info(`${options.name} listener back`);
          wake();
        },
        () => !stopped && again(Math.min(relisten.maxMs, delayMs * 2)),
      );
    }, delayMs);
  };
  function lost(client: pg.Client, error?: Error) {
    if (client !== listener || stopped) return;
    listener = undefined;
    logger.warn(`${options.name} listener lost; polling until it listens again`, { error: error?.message ?? 'connection ended' });
    void client.end().catch(() => undefined);
    again(relisten.baseMs);
  }

  await listen();
  const loop = startTimedLoop({ name: options.name, everyMs: options.pollMs, logger, step: options.step, backoff: { baseMs: 250, maxMs: 5_000 } });
  wake = () => loop.wake();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      await loop.stop();
      const current = listener;
      listener = undefined;
      await current?.end();
    },
  };
}
