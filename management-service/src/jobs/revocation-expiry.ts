import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import { deleteExpiredRevocations } from '../store/token-revocations.ts';

/** Removes token revocations no live access token can need any more, at start and then every `everyMs`. */
export function startRevocationExpiry(db: Knex, logger: Logger, everyMs = 3_600_000): { stop: () => Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const expire = () => {
    running = deleteExpiredRevocations(db)
      .then((removed) => {
        if (removed > 0) logger.info('token revocations expired', { removed });
      })
      .catch((error: Error) => {
        logger.warn('token revocation expiry failed', { error: error.message });
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
