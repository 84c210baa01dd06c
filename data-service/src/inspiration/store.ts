import type { DuckDBConnection } from '@duckdb/node-api';
import type { components } from '@platform/api-types/data';
import { BUILTIN_INSPIRATIONS, builtinInspiration, type InspirationDefinition } from './builtins.ts';

type Input = components['schemas']['InspirationDefinitionInput'];

// The replica's `inspirations` table, its cache of Postgres (postgres.ts; tenant-data/cache.ts keeps it current).

/** The definitions a tenant sees: the platform's and its own, ordered by id. */
export async function listDefinitions(conn: DuckDBConnection, tenant: string): Promise<InspirationDefinition[]> {
  const rows = (await conn.runAndReadAll('select id, name, description, type, xray_query from inspirations where tenant_id = $1', [tenant])).getRowObjectsJS();
  const custom: InspirationDefinition[] = rows
    // A platform id wins over a custom row that a newer release made a platform id.
    .filter((r) => !builtinInspiration(String(r.id)))
    .map((r) => ({
      id: String(r.id),
      name: String(r.name),
      description: String(r.description),
      type: String(r.type) as InspirationDefinition['type'],
      custom: true,
      query: { xray: String(r.xray_query) },
    }));
  return [...BUILTIN_INSPIRATIONS, ...custom].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Creates or replaces a tenant's definition. Run it in a transaction (TenantCache does): the table has no key, so the old row is deleted first. */
export async function putDefinition(conn: DuckDBConnection, tenant: string, id: string, input: Input): Promise<void> {
  await conn.run('delete from inspirations where tenant_id = $1 and id = $2', [tenant, id]);
  await conn.run('insert into inspirations (tenant_id, id, name, description, type, xray_query) values ($1, $2, $3, $4, $5, $6)', [
    tenant,
    id,
    input.name,
    input.description,
    input.type,
    input.query.xray,
  ]);
}

/** Deletes a tenant's definition; false when it had none of that id. */
export async function deleteDefinition(conn: DuckDBConnection, tenant: string, id: string): Promise<boolean> {
  const rows = (await conn.runAndReadAll('delete from inspirations where tenant_id = $1 and id = $2 returning id', [tenant, id])).getRows();
  return rows.length > 0;
}
