import pg from 'pg';
import { writeTenantData } from '../../src/tenant-data/postgres.ts';
import { removeUniversePg, setUniversePg } from '../../src/tenant-data/universes.ts';

/** A universe of a tenant (the tenant must exist: Postgres refers tenant data to `tenants`). */
export type TenantUniverse = { tenant: string; name: string; isins: readonly string[] };

/**
 * Writes tenants' universes to Postgres as `npm run cli -- data universe set` does (one transaction
 * per universe, bumping the tenant's version); every replica serves them from its next request.
 * No ISIN check: fixtures use made-up ISINs.
 */
export async function seedTenantUniverses(database: { url: string }, universes: readonly TenantUniverse[]): Promise<void> {
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  try {
    for (const u of universes) await writeTenantData(pool, u.tenant, (client) => setUniversePg(client, u.tenant, u.name, u.isins));
  } finally {
    await pool.end();
  }
}

/** Drops a tenant's universe in Postgres as `data universe remove` does. */
export async function removeTenantUniverse(database: { url: string }, tenant: string, name: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  try {
    await writeTenantData(
      pool,
      tenant,
      (client) => removeUniversePg(client, tenant, name),
      (n) => n > 0,
    );
  } finally {
    await pool.end();
  }
}
