import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import type { DuckStore } from '../../store/duckdb.ts';

/** POST /smart-search/: filters, sorting and X-Ray parameters (decisions §12). */
export function searchHandlers(_duck: DuckStore): Record<string, OperationHandler<DataPrincipal>> {
  return {};
}
