// The HTTP layer: routes of the data contract bound to the features' functions; no SQL here.
import type { Request } from 'express';
import {
  createApiApp,
  loadContract,
  natsAnswers,
  type Admission,
  type HttpMetrics,
  type Logger,
  type NatsConnection,
  type RateLimitStore,
  type Tracing,
  type BuildInfo,
} from '@platform/shared';
import type { DataPrincipal } from '../auth/api-keys.ts';
import { dataRateLimits, type TenantRateLimits } from '../domain/rate-limits.ts';
import type { SimulationLimits } from '../simulation/request.ts';
import type { SimulationScheduler } from '../workers/simulation-scheduler.ts';
import { duckAnswers, type DuckStore } from '../store/duckdb.ts';
import type { TenantCache } from '../tenant-data/cache.ts';
import type { FxRatesStore } from '../fx/store.ts';
import { customReferenceHandlers } from './handlers/custom-reference.ts';
import { fxRateHandlers } from './handlers/fx-rates.ts';
import type { IdempotencyOptions } from './idempotency.ts';
import { inspirationHandlers } from './handlers/inspirations.ts';
import { performanceHandlers } from './handlers/performance.ts';
import { referenceHandlers } from './handlers/reference.ts';
import { searchHandlers } from './handlers/search.ts';
import { xrayHandlers } from './handlers/xray.ts';
import { dataProblem } from './problems.ts';

export type DataDeps = {
  duck: DuckStore;
  /** The reference data's exchange rates, one cached reader shared by every feature (docs/adr/0057-fx-rates.md). */
  fx: FxRatesStore;
  /** The tenants' data: Postgres, cached in `duck`. */
  tenants: TenantCache;
  idempotency: IdempotencyOptions;
  /** Bounds of a future performance simulation, where it waits and runs, and the oldest exchange rate it converts with (FX_MAX_AGE_DAYS). */
  simulation: { limits: SimulationLimits; scheduler: SimulationScheduler; fxMaxAgeDays: number };
  nats: NatsConnection;
  verifier: { tenantId: (req: Request) => Promise<string>; apiKey: (req: Request) => Promise<DataPrincipal> };
  /** Resolves when Postgres (API keys, the tenants' data) answers. */
  postgresAnswers: () => Promise<unknown>;
  logger: Logger;
  /** The build /livez tells (docs/adr/0047-container-image.md). */
  build?: BuildInfo;
  bodyLimitBytes: number;
  /** Reverse proxies whose X-Forwarded-For is believed (TRUSTED_PROXIES). */
  trustedProxies?: number;
  /** Origins of browser pages that may call the interface (CORS_ALLOWED_ORIGINS). */
  corsAllowedOrigins?: readonly string[];
  /** docs/adr/0023-rate-limits.md: the counters, the API-key limit and each tenant's own (none: nothing is limited). */
  rateLimits?: { store: RateLimitStore; settings: { windowSeconds: number; apiKey: number }; tenantLimits: (tenantId: string) => Promise<TenantRateLimits> };
  /** A span and a duration per request (docs/adr/0024-observability.md). */
  observability?: { tracing: Tracing; metrics: HttpMetrics };
  /** Requests beyond the adaptive limit in flight shed at once (docs/adr/0062-overload-shedding.md); none: every request admitted. */
  admission?: Admission;
};

/** The data interface: routes of contracts/data.openapi.yaml, handlers by operationId. */
export async function createDataApp(deps: DataDeps) {
  const limits = deps.rateLimits;
  return createApiApp<DataPrincipal>({
    definition: await loadContract('data'),
    handlers: {
      ...referenceHandlers(deps.duck, deps.tenants),
      ...fxRateHandlers(deps.fx),
      ...customReferenceHandlers(deps.duck, deps.tenants, deps.idempotency),
      ...xrayHandlers(deps.duck, deps.tenants),
      ...inspirationHandlers(deps.duck, deps.tenants),
      ...searchHandlers(deps.duck, deps.tenants),
      ...performanceHandlers(deps.duck, deps.fx, deps.simulation),
    },
    securityHandlers: { tenantId: deps.verifier.tenantId, apiKey: deps.verifier.apiKey },
    principal: (security) => security.apiKey as DataPrincipal,
    readiness: {
      duckdb: () => duckAnswers(deps.duck),
      postgres: deps.postgresAnswers,
      nats: async () => {
        if (!(await natsAnswers(deps.nats))) throw new Error('NATS does not answer');
      },
    },
    build: deps.build,
    logger: deps.logger,
    bodyLimitBytes: deps.bodyLimitBytes,
    trustedProxies: deps.trustedProxies,
    cors: { allowedOrigins: deps.corsAllowedOrigins ?? [] },
    mapError: dataProblem,
    rateLimits: limits && {
      store: limits.store,
      limitsFor: async ({ principal }) => dataRateLimits(limits.settings, principal, principal ? await limits.tenantLimits(principal.tenantId) : {}),
    },
    ...deps.observability,
    admission: deps.admission,
  });
}
