import type { Knex } from 'knex';
import type { Admission, BuildInfo, HttpMetrics, Tracing } from '@platform/shared';
import { createApiApp, loadContract, type Logger, type NatsConnection, type RateLimitStore } from '@platform/shared';
import type { BearerAuthenticator } from '../auth/authenticate.ts';
import type { LoginThrottle } from '../auth/login-throttle.ts';
import type { Principal } from '../domain/principal.ts';
import { managementRateLimits, type RateLimitSettings, type TenantRateLimits } from '../domain/rate-limits.ts';
import type { TokenSigner } from '../auth/tokens.ts';
import type { EntityKind, Operation } from '../domain/entities/kind.ts';
import { databaseAnswers } from '../store/db.ts';
import { entityKinds } from '../domain/entities/catalog.ts';
import { assessmentHandlers } from './handlers/assessments.ts';
import { authHandlers } from './handlers/auth.ts';
import { consolePages, type ConsolePagesOptions } from './console-pages.ts';
import { collectionHandlers } from './handlers/collections.ts';
import { entityHandlers } from './handlers/entities.ts';
import { exportHandlers } from './handlers/export.ts';
import { eventHandlers } from './handlers/events.ts';
import { fundingHandlers } from './handlers/funding.ts';
import { historyHandlers } from './handlers/history.ts';
import { erasureHandlers } from './handlers/erasure.ts';
import { natsHistoryAsker } from '../flows/history.ts';
import { optimizationHandlers } from './handlers/optimizations.ts';
import { idempotent, type PostHandler } from './idempotency.ts';
import { docsPages } from './docs-pages.ts';
import { domainProblem } from './problems.ts';

export type ManagementDeps = {
  db: Knex;
  nats: NatsConnection;
  signer: TokenSigner;
  authenticate: BearerAuthenticator;
  logger: Logger;
  /** The build /livez tells (docs/adr/0047-container-image.md). */
  build?: BuildInfo;
  bodyLimitBytes: number;
  /** Reverse proxies whose X-Forwarded-For is believed (TRUSTED_PROXIES). */
  trustedProxies?: number;
  refreshTtlSeconds: number;
  /** How long a portfolio's history waits for the data service (HISTORY_TIMEOUT_MS); 10 s when not given. */
  historyTimeoutMs?: number;
  idempotency: { retentionDays: number; waitMs: number };
  /** A span and a duration per request (docs/adr/0024-observability.md). */
  observability?: { tracing: Tracing; metrics: HttpMetrics };
  /** Requests beyond the adaptive limit in flight shed at once (docs/adr/0062-overload-shedding.md); none: every request admitted. */
  admission?: Admission;
  /** docs/adr/0023-rate-limits.md: the counters, the defaults and each tenant's own limits (none: nothing is limited). */
  rateLimits?: { store: RateLimitStore; settings: RateLimitSettings; tenantLimits: (tenantId: string) => Promise<TenantRateLimits> };
  loginThrottle?: LoginThrottle;
  /** The administration console at /console/ (docs/adr/0036-administration-console.md); none: not served. */
  console?: ConsolePagesOptions;
};

/** Each kind's checks that run before the contract's validation, by the operationId they belong to. */
function bodyPrechecks(kinds: EntityKind[]): Map<string, (body: unknown) => void> {
  return new Map(
    kinds.flatMap((kind) =>
      Object.entries(kind.beforeValidation ?? {}).map(([op, check]): [string, (body: unknown) => void] => [kind.operations[op as Operation], check]),
    ),
  );
}

/** The body fields that name something in the client's or broker's systems (docs/adr/0040-identifiers-as-people-read-them.md). */
const IDENTIFIER_FIELDS = ['external_id', 'email', 'brokerage_user_id', 'brokerage_portfolio_id'];

/** The management interface: routes of contracts/management.openapi.yaml, handlers by operationId. */
export async function createManagementApp(deps: ManagementDeps) {
  const definition = await loadContract('management');
  const entities = entityHandlers(deps.db, entityKinds);
  const precheck = bodyPrechecks(entityKinds);
  const optimizations = optimizationHandlers(deps.db, definition.components?.schemas ?? {});
  const assessments = assessmentHandlers(deps.db);
  // Every POST except the token endpoints (tokens are never replayed) keeps its Idempotency-Key.
  const posts: Record<string, PostHandler> = { ...entities.posts, ...fundingHandlers(), ...erasureHandlers(), ...optimizations.posts, ...assessments.posts };
  const idempotency = { db: deps.db, ...deps.idempotency };
  const limits = deps.rateLimits;
  return createApiApp<Principal>({
    definition,
    handlers: {
      ...authHandlers(deps),
      ...Object.fromEntries(Object.entries(posts).map(([op, handler]) => [op, idempotent(idempotency, handler)])),
      ...entities.others,
      ...optimizations.others,
      ...assessments.others,
      ...collectionHandlers(deps.db, entityKinds, definition.components?.schemas ?? {}),
      ...eventHandlers(deps.db),
      ...exportHandlers(deps.db),
      ...historyHandlers(deps.db, natsHistoryAsker(deps.nats, deps.historyTimeoutMs ?? 10_000)),
    },
    securityHandlers: { bearerAuth: deps.authenticate },
    principal: (security) => security.bearerAuth as Principal,
    // NATS is not part of readiness: requests are served and the outbox keeps the events while it
    // is away (events/nats-status.ts logs it).
    readiness: {
      postgres: () => databaseAnswers(deps.db),
    },
    build: deps.build,
    logger: deps.logger,
    bodyLimitBytes: deps.bodyLimitBytes,
    trustedProxies: deps.trustedProxies,
    mapError: domainProblem,
    pages: { docs: docsPages(), ...(deps.console ? { console: consolePages(deps.console) } : {}) },
    ...deps.observability,
    admission: deps.admission,
    beforeValidation: (operationId, body) => precheck.get(operationId)?.(body),
    identifierFields: IDENTIFIER_FIELDS,
    rateLimits: limits && {
      store: limits.store,
      limitsFor: async (request) =>
        managementRateLimits(limits.settings, request, request.principal ? await limits.tenantLimits(request.principal.tenantId) : {}),
    },
  });
}
