import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { smartSearch, type SmartSearchRequest } from '../../search/search.ts';
import type { DuckStore } from '../../store/duckdb.ts';
import type { TenantCache } from '../../tenant-data/cache.ts';

/** POST /smart-search/: filters, sorting and X-Ray parameters (README.md, Data interface). */
export function searchHandlers(duck: DuckStore, tenants: TenantCache): Record<string, OperationHandler<DataPrincipal>> {
  return {
    smartSearch: async ({ body, principal }) => {
      await tenants.ensureFresh(principal.tenantId);
      return { status: 200, body: { data: await smartSearch(duck, principal.tenantId, body as SmartSearchRequest), meta: {} } };
    },
  };
}
