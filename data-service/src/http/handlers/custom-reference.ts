import type { HandlerContext, OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { parseCustomReferenceCsv } from '../../custom/csv.ts';
import { clearValues, readValuesJson, removeValues, storedKeys, upsertValues, type CustomValue, type CustomValues } from '../../custom/store.ts';
import { clearValuesPg, removeValuesPg, upsertValuesPg } from '../../custom/postgres.ts';
import { collectValues } from '../../custom/values.ts';
import { unknownField } from '../../domain/reference-fields.ts';
import type { DuckStore } from '../../store/duckdb.ts';
import type { TenantCache } from '../../tenant-data/cache.ts';
import { keyedWrites, type IdempotencyOptions } from '../idempotency.ts';

type Ctx = HandlerContext<DataPrincipal>;
type BatchBody = { data: { instrument_id: string; reference_data: Record<string, CustomValue> }[] };
type QueryBody = { instrument_ids?: string[]; keys?: string[] };
type RemoveBody = { instrument_ids: string[]; keys?: string[] };

/** Custom reference data of a tenant: batch, CSV, query, remove, clear (docs/adr/0016-tenant-data-in-postgres.md). */
export function customReferenceHandlers(
  duck: DuckStore,
  tenants: TenantCache,
  idempotency: IdempotencyOptions,
): Record<string, OperationHandler<DataPrincipal>> {
  const write = keyedWrites(tenants, idempotency);
  const upserted = (n: number) => ({ status: 200, body: { data: { upserted: n }, meta: null } });
  const removed = (n: number) => ({ status: 200, body: { data: { removed: n }, meta: null } });
  const upsert = (ctx: Ctx, values: CustomValues) => {
    const tenantId = ctx.principal.tenantId;
    return write(ctx, { postgres: (client) => upsertValuesPg(client, tenantId, values), local: (conn) => upsertValues(conn, tenantId, values) }, upserted);
  };
  /** Removes the given keys (all when none are given) of the given instruments, or without instruments every value of the tenant. */
  const remove = (ctx: Ctx, isins?: readonly string[], keys?: readonly string[]) => {
    const tenantId = ctx.principal.tenantId;
    return write(
      ctx,
      {
        postgres: (client) => (isins ? removeValuesPg(client, tenantId, isins, keys) : clearValuesPg(client, tenantId)),
        local: (conn) => (isins ? removeValues(conn, tenantId, isins, keys) : clearValues(conn, tenantId)),
      },
      removed,
    );
  };

  return {
    upsertCustomReference: async (ctx) => {
      const values = collectValues(
        (ctx.body as BatchBody).data,
        (e) => ({ isin: e.instrument_id, values: Object.entries(e.reference_data) }),
        (i, key) => ['body', 'data', i, 'reference_data', key],
      );
      return upsert(ctx, values);
    },

    uploadCustomReferenceCsv: async (ctx) => {
      const { rows } = parseCustomReferenceCsv(typeof ctx.body === 'string' ? ctx.body : '');
      const values = collectValues(
        rows,
        (r) => ({ isin: r.isin, values: r.values }),
        (i, key) => ['body', rows[i]!.row, key],
      );
      return upsert(ctx, values);
    },

    queryCustomReference: async ({ body, principal }) => {
      const { instrument_ids: isins, keys } = (body ?? {}) as QueryBody;
      await tenants.ensureFresh(principal.tenantId);
      const json = await duck.use(async ({ conn }) => {
        if (keys) {
          const known = new Set(await storedKeys(conn, principal.tenantId, keys));
          const unknown = keys.findIndex((k) => !known.has(k));
          if (unknown >= 0) throw unknownField(['body', 'keys', unknown], keys[unknown]!, await storedKeys(conn, principal.tenantId));
        }
        return readValuesJson(conn, principal.tenantId, { isins, keys });
      });
      return { status: 200, body: Buffer.from(json, 'utf8'), contentType: 'application/json; charset=utf-8' };
    },

    removeCustomReference: async (ctx) => {
      const { instrument_ids: isins, keys } = ctx.body as RemoveBody;
      return remove(ctx, isins, keys);
    },

    clearCustomReference: async (ctx) => remove(ctx),
  };
}
