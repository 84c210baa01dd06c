import type { Knex } from 'knex';

/** The events of knex's connection pool (tarn) that time an acquire. */
type TarnPool = {
  on: (event: 'acquireRequest' | 'acquireSuccess' | 'acquireFail', listener: (eventId: number) => void) => void;
  removeListener: (event: 'acquireRequest' | 'acquireSuccess' | 'acquireFail', listener: (eventId: number) => void) => void;
};

/**
 * The wait for a Postgres connection, one of the signals of the admission limit
 * (docs/adr/0062-overload-shedding.md): `sample()` gives the longest wait of the acquires that ended
 * since the last sample, or the age of the oldest still waiting if longer (a pool whose every
 * connection is held by stuck work ends no acquire at all), and starts a new sample.
 */
export function poolWait(db: Knex, now: () => number = () => performance.now()): { sample: () => number; stop: () => void } {
  const pool = (db.client as { pool?: TarnPool }).pool;
  if (!pool) return { sample: () => 0, stop: () => {} };
  // Acquires waiting, in the order they asked: the first is the oldest.
  const waiting = new Map<number, number>();
  let longest = 0;
  const asked = (eventId: number) => void waiting.set(eventId, now());
  const ended = (eventId: number) => {
    const at = waiting.get(eventId);
    if (at === undefined) return;
    waiting.delete(eventId);
    longest = Math.max(longest, now() - at);
  };
  pool.on('acquireRequest', asked);
  pool.on('acquireSuccess', ended);
  pool.on('acquireFail', ended);
  return {
    sample: () => {
      let wait = longest;
      longest = 0;
      for (const at of waiting.values()) {
        wait = Math.max(wait, now() - at);
        break;
      }
      return wait;
    },
    stop: () => {
      pool.removeListener('acquireRequest', asked);
      pool.removeListener('acquireSuccess', ended);
      pool.removeListener('acquireFail', ended);
      waiting.clear();
    },
  };
}
