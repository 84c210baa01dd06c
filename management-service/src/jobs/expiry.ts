import type { Knex } from 'knex';
import { deleteExpiredKeys, type Logger } from '@platform/shared';
import { knexSql } from '../store/db.ts';
import { deleteExpiredRevocations } from '../store/token-revocations.ts';

/** Runs `remove` at start and then every `everyMs`, logging what it removed; stop() waits for a run in progress. */
function startExpiry(what: string, remove: () => Promise<number>, logger: Logger, everyMs: number): { stop: () => Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const expire = () => {
    running = remove()
      .then((removed) => {
        if (removed > 0) logger.info(`${what} expired`, { removed });
      })
      .catch((error: Error) => {
        logger.warn(`${what} expiry failed`, { error: error.message });
      });
  };
  expire();
  const timer = setInterval(expire, everyMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/** Removes Idempotency-Keys past their retention. */
export const startKeyExpiry = (db: Knex, logger: Logger, everyMs = 3_600_000) =>
  startExpiry('idempotency keys', () => deleteExpiredKeys(knexSql(db)), logger, everyMs);

/** Removes token revocations no live access token can need any more. */
export const startRevocationExpiry = (db: Knex, logger: Logger, everyMs = 3_600_000) =>
  startExpiry('token revocations', () => deleteExpiredRevocations(db), logger, everyMs);
