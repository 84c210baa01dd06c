import type { DuckDBConnection } from '@duckdb/node-api';
import { NotFound } from '../domain/errors.ts';
import type { SqlParams } from '../store/params.ts';

/**
 * A tenant's universes: the platform's named ones of the reference data (GLOBAL, DEFAULT, ROBO),
 * which every tenant sees, and its own (main `universes`, by tenant_id: the replica's cache of
 * Postgres, see tenant-data/). A name the tenant also uses holds the members of both, as the
 * reference endpoints answer it. A universe exists while it has members.
 */

/** SQL (a subquery of `isin`) of the members of a named universe, or of all the tenant's universes together. */
export function universeSql(ref: string, tenant: string, name: string | undefined, params: SqlParams): string {
  const t = `${params.bind(tenant)}::varchar`;
  if (name === undefined) return `(select isin from universes where tenant_id = ${t} union select isin from ${ref}.universes)`;
  const u = `${params.bind(name)}::varchar`;
  return `(select isin from universes where tenant_id = ${t} and universe_name = ${u} union select isin from ${ref}.universes where universe_name = ${u})`;
}

/** Throws NotFound for the first name that is neither the tenant's universe nor a platform one. */
export async function assertUniverses(conn: DuckDBConnection, ref: string, tenant: string, names: (string | undefined)[]): Promise<void> {
  for (const name of new Set(names)) {
    if (name === undefined) continue;
    const found = await conn.runAndReadAll(
      `select exists (select 1 from universes where tenant_id = $1 and universe_name = $2)
          or exists (select 1 from ${ref}.universes where universe_name = $2)`,
      [tenant, name],
    );
    if (found.getRows()[0]?.[0] !== true) throw new NotFound(`Unknown universe '${name}'.`);
  }
}
