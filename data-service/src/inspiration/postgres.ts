import type { components } from '@platform/api-types/data';
import type { Queryable } from '../tenant-data/postgres.ts';

type Input = components['schemas']['InspirationDefinitionInput'];

/**
 * A tenant's inspiration definitions in Postgres (data_inspirations), the source of truth of every
 * replica's `inspirations` cache (store.ts). Run inside TenantCache.write, whose version bump
 * serialises the tenant's writers, so reading before writing is safe.
 */

/** Creates or replaces a tenant's definition; true when it was created. */
export async function putDefinitionPg(db: Queryable, tenant: string, id: string, input: Input): Promise<boolean> {
  const existed = (await db.query('select 1 from data_inspirations where tenant_id = $1 and id = $2', [tenant, id])).rowCount === 1;
  await db.query(
    `insert into data_inspirations (tenant_id, id, name, description, type, xray_query) values ($1, $2, $3, $4, $5, $6)
     on conflict (tenant_id, id) do update set name = excluded.name, description = excluded.description, type = excluded.type, xray_query = excluded.xray_query`,
    [tenant, id, input.name, input.description, input.type, input.query.xray],
  );
  return !existed;
}

/** Deletes a tenant's definition; false when it had none of that id. */
export async function deleteDefinitionPg(db: Queryable, tenant: string, id: string): Promise<boolean> {
  return (await db.query('delete from data_inspirations where tenant_id = $1 and id = $2', [tenant, id])).rowCount === 1;
}
