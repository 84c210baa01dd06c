import pg from 'pg';
import { connectNats, listen, type Logger } from '@platform/shared';
import { createApiKeyVerifier } from './auth/api-keys.ts';
import type { DataConfig } from './config.ts';
import { createDataApp } from './http/app.ts';
import { openDuckStore } from './store/duckdb.ts';

export type RunningService = { url: string; stop: () => Promise<void> };

/** Opens the DuckDB file, connects NATS and the key store, and serves the data interface until stop(). */
export async function startDataService(config: DataConfig, logger: Logger): Promise<RunningService> {
  const duck = await openDuckStore(config.DUCKDB_PATH);
  const keys = new pg.Pool({ connectionString: config.DATABASE_URL, max: 2 });
  const nats = await connectNats(config.NATS_URL, 'data-service');
  const app = await createDataApp({
    duck,
    nats,
    verifier: createApiKeyVerifier(keys, config.API_KEY_CACHE_MS),
    keyStoreAnswers: () => keys.query('select 1'),
    logger,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
  });
  const http = await listen(app, config.HOST, config.PORT, config.SHUTDOWN_GRACE_MS, logger);
  logger.info('data service listening', { url: http.url });
  return {
    url: http.url,
    stop: async () => {
      await http.close();
      await nats.drain();
      await keys.end();
      duck.close();
      logger.info('data service stopped');
    },
  };
}
