import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import type { DuckStore } from '../../store/duckdb.ts';

/** Inspirations and their definitions, built-in and the tenant's own. */
export function inspirationHandlers(_duck: DuckStore): Record<string, OperationHandler<DataPrincipal>> {
  return {};
}
