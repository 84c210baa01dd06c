import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import type { DuckStore } from '../../store/duckdb.ts';

/** POST /data/reference/query/ and GET /data/reference/universe/ (JSON and Arrow). */
export function referenceHandlers(_duck: DuckStore): Record<string, OperationHandler<DataPrincipal>> {
  return {};
}
