import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import type { DuckStore } from '../../store/duckdb.ts';

/** Custom reference data of a tenant: batch, CSV, query, remove, clear (decisions §12). */
export function customReferenceHandlers(_duck: DuckStore): Record<string, OperationHandler<DataPrincipal>> {
  return {};
}
