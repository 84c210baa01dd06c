import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import type { DuckStore } from '../../store/duckdb.ts';

/** GET /xray/universe/: factor stars by quintile (decisions §12). */
export function xrayHandlers(_duck: DuckStore): Record<string, OperationHandler<DataPrincipal>> {
  return {};
}
