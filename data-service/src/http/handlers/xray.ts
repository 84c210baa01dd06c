import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { UnknownValue } from '../../domain/errors.ts';
import type { DuckStore } from '../../store/duckdb.ts';
import type { TenantCache } from '../../tenant-data/cache.ts';
import { FACTOR_NAMES, isFactor, type GroupSplitType } from '../../xray/factors.ts';
import { XrayService } from '../../xray/xray.ts';
import { queryList, queryOne } from '../query-params.ts';

/** GET /xray/universe/: factor stars by quintile (docs/adr/0014-xray-stars.md). */
export function xrayHandlers(duck: DuckStore, tenants: TenantCache): Record<string, OperationHandler<DataPrincipal>> {
  const xray = new XrayService(duck);
  return {
    getXrayUniverse: async ({ query, principal }) => {
      const fields = queryList(query.fields);
      fields.forEach((field, i) => {
        if (!isFactor(field)) throw new UnknownValue(['query', 'fields', i], `unknown X-Ray factor '${field}'; allowed: ${FACTOR_NAMES.join(', ')}`);
      });
      const tenantVersion = await tenants.ensureFresh(principal.tenantId);
      const body = await xray.universeAnswer(
        principal.tenantId,
        {
          universe: queryOne(query.universe_name)!,
          instrumentUniverse: queryOne(query.instrument_universe),
          normalizationUniverse: queryOne(query.normalization_universe),
          split: queryOne(query.group_split_type) as GroupSplitType | undefined,
        },
        fields.filter(isFactor),
        tenantVersion,
      );
      // Encoded JSON (the same bytes JSON.stringify would send), cached per field list.
      return { status: 200, body, contentType: 'application/json; charset=utf-8' };
    },
  };
}
