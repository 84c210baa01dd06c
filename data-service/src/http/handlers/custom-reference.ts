import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { parseCustomReferenceCsv } from '../../custom/csv.ts';
import { clearValues, readValuesJson, removeValues, storedKeys, upsertValues, type CustomValue, type CustomValues } from '../../custom/store.ts';
import { collectValues } from '../../custom/values.ts';
import { unknownField } from '../../reference/fields.ts';
import type { DuckStore } from '../../store/duckdb.ts';

type BatchBody = { data: { instrument_id: string; reference_data: Record<string, CustomValue> }[] };
type QueryBody = { instrument_ids?: string[]; keys?: string[] };
type RemoveBody = { instrument_ids: string[]; keys?: string[] };

/**
 * Runs writes one after the other. DuckDB refuses concurrent transactions that touch the same rows
 * (`Conflict on update`, and even a duplicate key from two `insert or replace`), so writes of the
 * replica's one process queue here instead of failing; reads do not wait.
 */
function writeQueue() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
}

/** Custom reference data of a tenant: batch, CSV, query, remove, clear (decisions §12). */
export function customReferenceHandlers(duck: DuckStore): Record<string, OperationHandler<DataPrincipal>> {
  const write = writeQueue();
  const upsert = (tenantId: string, values: CustomValues) => write(() => duck.use(({ conn }) => upsertValues(conn, tenantId, values)));
  const upserted = (n: number) => ({ status: 200, body: { data: { upserted: n }, meta: null } });
  const removed = (n: number) => ({ status: 200, body: { data: { removed: n }, meta: null } });

  return {
    upsertCustomReference: async ({ body, principal }) => {
      const values = collectValues(
        (body as BatchBody).data,
        (e) => ({ isin: e.instrument_id, values: Object.entries(e.reference_data) }),
        (i, key) => ['body', 'data', i, 'reference_data', key],
      );
      return upserted(await upsert(principal.tenantId, values));
    },

    uploadCustomReferenceCsv: async ({ body, principal }) => {
      const { rows } = parseCustomReferenceCsv(typeof body === 'string' ? body : '');
      const values = collectValues(
        rows,
        (r) => ({ isin: r.isin, values: r.values }),
        (i, key) => ['body', rows[i]!.row, key],
      );
      return upserted(await upsert(principal.tenantId, values));
    },

    queryCustomReference: async ({ body, principal }) => {
      const { instrument_ids: isins, keys } = (body ?? {}) as QueryBody;
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

    removeCustomReference: async ({ body, principal }) => {
      const { instrument_ids: isins, keys } = body as RemoveBody;
      return removed(await write(() => duck.use(({ conn }) => removeValues(conn, principal.tenantId, isins, keys))));
    },

    clearCustomReference: async ({ principal }) => removed(await write(() => duck.use(({ conn }) => clearValues(conn, principal.tenantId)))),
  };
}
