import type { Request } from 'express';
import { createApiApp, loadContract, natsAnswers, type Logger, type NatsConnection } from '@platform/shared';
import type { DataPrincipal } from '../auth/api-keys.ts';
import { duckAnswers, type DuckStore } from '../store/duckdb.ts';

export type DataDeps = {
  duck: DuckStore;
  nats: NatsConnection;
  verifier: { tenantId: (req: Request) => Promise<string>; apiKey: (req: Request) => Promise<DataPrincipal> };
  /** Resolves when the key store (the management database) answers. */
  keyStoreAnswers: () => Promise<unknown>;
  logger: Logger;
  bodyLimitBytes: number;
};

/** The data interface: routes of contracts/data.openapi.yaml, handlers by operationId. */
export async function createDataApp(deps: DataDeps) {
  return createApiApp<DataPrincipal>({
    definition: await loadContract('data'),
    handlers: {},
    securityHandlers: { tenantId: deps.verifier.tenantId, apiKey: deps.verifier.apiKey },
    principal: (security) => security.apiKey as DataPrincipal,
    readiness: {
      duckdb: () => duckAnswers(deps.duck),
      postgres: deps.keyStoreAnswers,
      nats: async () => {
        if (!(await natsAnswers(deps.nats))) throw new Error('NATS does not answer');
      },
    },
    logger: deps.logger,
    bodyLimitBytes: deps.bodyLimitBytes,
  });
}
