import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import { deleteExpiredKeys } from '@platform/shared';
import { knexSql } from '../store/db.ts';

/** Removes Idempotency-Keys past their retention, at start and then every `everyMs`. */
export function startKeyExpiry(db: Knex, logger: Logger, everyMs = 3_600_000): { stop: () => Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const expire = () => {
    running = deleteExpiredKeys(knexSql(db))
      .then((removed) => {
        if (removed > 0) logger.info('idempotency keys expired', { removed });
      })
      .catch((error: Error) => {
        logger.warn('idempotency key expiry failed', { error: error.message });
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
