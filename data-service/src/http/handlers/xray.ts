import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { UnknownValue } from '../../domain/errors.ts';
import type { DuckStore } from '../../store/duckdb.ts';
import type { TenantCache } from '../../tenant-data/cache.ts';
import { FACTOR_NAMES, FACTORS, isFactor, type GroupSplitType } from '../../xray/factors.ts';
import { starsOf, XrayService } from '../../xray/xray.ts';
import { queryList, queryOne } from '../query-params.ts';

/** GET /xray/universe/: factor stars by quintile (decisions §12). */
export function xrayHandlers(duck: DuckStore, tenants: TenantCache): Record<string, OperationHandler<DataPrincipal>> {
  const xray = new XrayService(duck);
  return {
    getXrayUniverse: async ({ query, principal }) => {
      const fields = queryList(query.fields);
      fields.forEach((field, i) => {
        if (!isFactor(field)) throw new UnknownValue(['query', 'fields', i], `unknown X-Ray factor '${field}'; allowed: ${FACTOR_NAMES.join(', ')}`);
      });
      const tenantVersion = await tenants.ensureFresh(principal.tenantId);
      const stars = await xray.universeStars(principal.tenantId, {
        universe: queryOne(query.universe_name)!,
        instrumentUniverse: queryOne(query.instrument_universe),
        normalizationUniverse: queryOne(query.normalization_universe),
        split: queryOne(query.group_split_type) as GroupSplitType | undefined,
      }, tenantVersion);
      const columns = [...new Set(fields)].map((field) => [field, FACTORS.findIndex((f) => f.field === field)] as const);
      const data: Record<string, Record<string, number | null>> = {};
      for (const [isin, values] of stars) data[isin] = Object.fromEntries(columns.map(([field, i]) => [field, starsOf(values, i)]));
      return { status: 200, body: [{ data }] };
    },
  };
}
