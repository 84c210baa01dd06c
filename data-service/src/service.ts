import pg from 'pg';
import { Resources, connectNats, listen, type Logger } from '@platform/shared';
import { createApiKeyVerifier } from './auth/api-keys.ts';
import type { DataConfig } from './config.ts';
import { createDataApp } from './http/app.ts';
import { openDuckStore } from './store/duckdb.ts';
import { ensureReferenceData } from './store/ensure-reference.ts';

export type RunningService = { url: string; stop: () => Promise<void> };

/** Opens the DuckDB file, connects NATS and the key store, and serves the data interface until stop(). */
export async function startDataService(config: DataConfig, logger: Logger): Promise<RunningService> {
  const resources = new Resources();
  return resources.build(async () => {
    await ensureReferenceData(config, logger);
    const duck = resources.add(await openDuckStore({ path: config.DUCKDB_PATH, referenceDir: config.REFERENCE_DIR }), (d) => d.close());
    if (config.REFERENCE_RELOAD_MS > 0) {
      const timer = setInterval(() => {
        duck
          .reload()
          .then((switched) => switched && logger.info('reference data reloaded', { dir: config.REFERENCE_DIR }))
          .catch((error: Error) => logger.warn('reference data reload failed; keeping the current data', { error: error.message }));
      }, config.REFERENCE_RELOAD_MS);
      resources.add(timer, (t) => clearInterval(t));
    }
    const keys = resources.add(new pg.Pool({ connectionString: config.DATABASE_URL, max: 2 }), (p) => p.end());
    const nats = resources.add(await connectNats(config.NATS_URL, 'data-service'), (n) => n.drain());
    const app = await createDataApp({
      duck,
      nats,
      verifier: createApiKeyVerifier(keys, config.API_KEY_CACHE_MS),
      keyStoreAnswers: () => keys.query('select 1'),
      logger,
      bodyLimitBytes: config.BODY_LIMIT_BYTES,
    });
    const http = resources.add(await listen(app, config.HOST, config.PORT, config.SHUTDOWN_GRACE_MS, logger), (h) => h.close());
    logger.info('data service listening', { url: http.url });
    return {
      url: http.url,
      stop: async () => {
        await resources.closeAll();
        logger.info('data service stopped');
      },
    };
  });
}
