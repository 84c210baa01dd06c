import type { Knex } from 'knex';
import { createApiApp, loadContract, natsAnswers, type Logger, type NatsConnection } from '@platform/shared';
import type { BearerAuthenticator } from '../auth/authenticate.ts';
import type { Principal } from '../auth/principal.ts';
import type { TokenSigner } from '../auth/tokens.ts';
import { databaseAnswers } from '../store/db.ts';
import { entityKinds } from '../domain/entities/catalog.ts';
import { checkManagerShape } from '../domain/entities/portfolios.ts';
import { authHandlers } from './handlers/auth.ts';
import { collectionHandlers } from './handlers/collections.ts';
import { entityHandlers } from './handlers/entities.ts';
import { eventHandlers } from './handlers/events.ts';
import { domainProblem } from './problems.ts';

export type ManagementDeps = {
  db: Knex;
  nats: NatsConnection;
  signer: TokenSigner;
  authenticate: BearerAuthenticator;
  logger: Logger;
  bodyLimitBytes: number;
  refreshTtlSeconds: number;
};

/** The management interface: routes of contracts/management.openapi.yaml, handlers by operationId. */
export async function createManagementApp(deps: ManagementDeps) {
  const definition = await loadContract('management');
  return createApiApp<Principal>({
    definition,
    handlers: {
      ...authHandlers(deps),
      ...entityHandlers(deps.db, entityKinds),
      ...collectionHandlers(deps.db, entityKinds, definition.components?.schemas ?? {}),
      ...eventHandlers(deps.db),
    },
    securityHandlers: { bearerAuth: deps.authenticate },
    principal: (security) => security.bearerAuth as Principal,
    readiness: {
      postgres: () => databaseAnswers(deps.db),
      nats: async () => {
        if (!(await natsAnswers(deps.nats))) throw new Error('NATS does not answer');
      },
    },
    logger: deps.logger,
    bodyLimitBytes: deps.bodyLimitBytes,
    mapError: domainProblem,
    beforeValidation: (operationId, body) => {
      if (operationId === 'updatePortfolio' || operationId === 'createPortfolio') checkManagerShape(body);
    },
  });
}
