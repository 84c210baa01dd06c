import { connectNats, ensureStreams, listen, type Logger } from '@platform/shared';
import { createBearerAuthenticator } from './auth/authenticate.ts';
import { createTokenSigner } from './auth/tokens.ts';
import type { ManagementConfig } from './config.ts';
import { createManagementApp } from './http/app.ts';
import { findActiveTenant } from './store/credentials.ts';
import { createDb } from './store/db.ts';
import { migrateLatest } from './store/migrate.ts';

export type RunningService = { url: string; stop: () => Promise<void> };

/** Connects Postgres and NATS, migrates, and serves the management interface until stop(). */
export async function startManagementService(config: ManagementConfig, logger: Logger): Promise<RunningService> {
  const db = createDb(config.DATABASE_URL, config.DATABASE_POOL_MAX);
  try {
    if (config.MIGRATE_ON_START) {
      const applied = await migrateLatest(db);
      if (applied.length > 0) logger.info('migrations applied', { applied });
    }
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const nats = await connectNats(config.NATS_URL, 'management-service');
  await ensureStreams(nats);
  const signer = await createTokenSigner(config.JWT_PRIVATE_KEY, config.JWT_ISSUER, config.ACCESS_TOKEN_TTL_SECONDS);
  const authenticate = createBearerAuthenticator({
    signer,
    oidc: config.OIDC_ISSUER
      ? { issuer: config.OIDC_ISSUER, audience: config.OIDC_AUDIENCE!, jwksUrl: config.OIDC_JWKS_URL!, tenantClaim: config.OIDC_TENANT_CLAIM }
      : undefined,
    tenantIsActive: async (id) => (await findActiveTenant(db, id)) !== undefined,
  });
  const app = await createManagementApp({
    db,
    nats,
    signer,
    authenticate,
    logger,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    refreshTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
  });
  const http = await listen(app, config.HOST, config.PORT, config.SHUTDOWN_GRACE_MS, logger);
  logger.info('management service listening', { url: http.url });
  return {
    url: http.url,
    stop: async () => {
      await http.close();
      await nats.drain();
      await db.destroy();
      logger.info('management service stopped');
    },
  };
}
