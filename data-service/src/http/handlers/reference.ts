import type { HandlerResult, OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { referenceAnswer, type ReferenceRequest } from '../../reference/answer.ts';
import type { DuckStore } from '../../store/duckdb.ts';
import type { TenantCache } from '../../tenant-data/cache.ts';
import { queryList, queryOne } from '../query-params.ts';
import { JSON_TYPE, negotiate } from '../representation.ts';

/**
 * The answer, with the time its making took and the part of it spent waiting for DuckDB (queries
 * and results; the rest is encoding): `Server-Timing: answer;dur=<ms>, query;dur=<ms>`.
 */
async function answer(duck: DuckStore, tenants: TenantCache, contentType: string, request: Omit<ReferenceRequest, 'format'>): Promise<HandlerResult> {
  await tenants.ensureFresh(request.tenantId);
  const started = performance.now();
  const result = await referenceAnswer(duck, { ...request, format: contentType === JSON_TYPE ? 'json' : 'arrow' });
  return {
    status: 200,
    body: result.bytes,
    contentType: result.format === 'json' ? 'application/json; charset=utf-8' : contentType,
    headers: { 'Server-Timing': `answer;dur=${(performance.now() - started).toFixed(1)}, query;dur=${result.queryMs.toFixed(1)}` },
  };
}

/** POST /data/reference/query/ and GET /data/reference/universe/ (JSON and Arrow). */
export function referenceHandlers(duck: DuckStore, tenants: TenantCache): Record<string, OperationHandler<DataPrincipal>> {
  return {
    queryReference: async (ctx) => {
      const contentType = negotiate(ctx);
      const body = ctx.body as { instrument_ids: string[]; fields: string[]; fields_extra: string[] };
      return answer(duck, tenants, contentType, {
        tenantId: ctx.principal.tenantId,
        source: { kind: 'ids', isins: body.instrument_ids },
        fields: body.fields,
        fieldsExtra: body.fields_extra,
        loc: { fields: ['body', 'fields'], fieldsExtra: ['body', 'fields_extra'] },
      });
    },

    getReferenceUniverse: async (ctx) => {
      const contentType = negotiate(ctx);
      return answer(duck, tenants, contentType, {
        tenantId: ctx.principal.tenantId,
        source: { kind: 'universe', name: queryOne(ctx.query.universe_name) },
        fields: queryList(ctx.query.fields),
        fieldsExtra: queryList(ctx.query.fields_extra),
        loc: { fields: ['query', 'fields'], fieldsExtra: ['query', 'fields_extra'] },
      });
    },
  };
}
