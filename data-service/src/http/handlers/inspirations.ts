import type { OperationHandler } from '@platform/shared';
import type { components } from '@platform/api-types/data';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { NotFound, StateConflict } from '../../domain/errors.ts';
import { builtinInspiration } from '../../inspiration/builtins.ts';
import { checkInspirationFilter, withInstruments } from '../../inspiration/evaluate.ts';
import { deleteDefinitionPg, putDefinitionPg } from '../../inspiration/postgres.ts';
import { deleteDefinition, listDefinitions, putDefinition } from '../../inspiration/store.ts';
import type { DuckStore } from '../../store/duckdb.ts';
import type { TenantCache } from '../../tenant-data/cache.ts';
import { queryList } from '../query-params.ts';

type Input = components['schemas']['InspirationDefinitionInput'];

/** Inspirations and their definitions, built-in and the tenant's own. */
export function inspirationHandlers(duck: DuckStore, tenants: TenantCache): Record<string, OperationHandler<DataPrincipal>> {
  const platformOnly = (id: string) => {
    if (builtinInspiration(id)) throw new StateConflict(`'${id}' is a platform inspiration and cannot be changed.`);
  };
  return {
    listInspirationDefinitions: async ({ principal }) => {
      await tenants.ensureFresh(principal.tenantId);
      return { status: 200, body: await duck.use(({ conn }) => listDefinitions(conn, principal.tenantId)) };
    },

    listInspirations: async ({ query, principal }) => {
      const ids = [...new Set(queryList(query.id))];
      await tenants.ensureFresh(principal.tenantId);
      const body = await duck.use(async ({ conn, ref }) => {
        const all = await listDefinitions(conn, principal.tenantId);
        const missing = ids.find((id) => !all.some((d) => d.id === id));
        if (missing !== undefined) throw new NotFound(`Unknown inspiration '${missing}'.`);
        return withInstruments(conn, ref, principal.tenantId, ids.length ? all.filter((d) => ids.includes(d.id)) : all);
      });
      return { status: 200, body };
    },

    putInspirationDefinition: async ({ params, body, principal }) => {
      const id = params.inspiration_id!;
      const input = body as Input;
      platformOnly(id);
      checkInspirationFilter(input.query.xray, ['body', 'query', 'xray']);
      const created = await tenants.write(principal.tenantId, {
        postgres: (client) => putDefinitionPg(client, principal.tenantId, id, input),
        local: (conn) => putDefinition(conn, principal.tenantId, id, input),
      });
      const definition = { id, name: input.name, description: input.description, type: input.type, custom: true, query: { xray: input.query.xray } };
      return created ? { status: 201, body: definition, headers: { Location: `/inspiration/definition/${id}` } } : { status: 200, body: definition };
    },

    deleteInspirationDefinition: async ({ params, principal }) => {
      const id = params.inspiration_id!;
      platformOnly(id);
      const deleted = await tenants.write(principal.tenantId, {
        postgres: (client) => deleteDefinitionPg(client, principal.tenantId, id),
        changed: (gone) => gone,
        local: (conn) => deleteDefinition(conn, principal.tenantId, id),
      });
      if (!deleted) throw new NotFound(`Unknown inspiration '${id}'.`);
      return { status: 204 };
    },
  };
}
