import type pg from 'pg';

/**
 * The tenant data of the data service in Postgres (data-service/migrations/007: data_custom_reference,
 * data_inspirations, data_universes), the source of truth that every replica caches in DuckDB, and
 * the version per tenant (data_tenant_versions) by which a replica knows its cache is current.
 */

/** What runs statements: a pool, or a client inside a transaction. */
export type Queryable = Pick<pg.ClientBase, 'query'>;

/** A tenant's rows as of one version. Custom values are JSON text. */
export type TenantSnapshot = {
  /** 0: the tenant has no data. */
  version: number;
  custom: [isin: string, key: string, value: string][];
  inspirations: [id: string, name: string, description: string, type: string, xrayQuery: string][];
  universes: [universeName: string, isin: string][];
};

const VERSION = 'select version from data_tenant_versions where tenant_id = $1';

/** The tenant's current version; 0 when it has never written (no data). One indexed read, prepared once per connection. */
export async function readVersion(db: Queryable, tenant: string): Promise<number> {
  const { rows } = await db.query<{ version: string }>({ name: 'data_tenant_version', text: VERSION, values: [tenant] });
  return rows.length > 0 ? Number(rows[0]!.version) : 0;
}

/** Runs `work` in one transaction; commits when it resolves, rolls back otherwise. */
async function transaction<T>(pool: pg.Pool, begin: string, work: (client: pg.PoolClient) => Promise<{ value: T; commit: boolean }>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const { value, commit } = await work(client);
    await client.query(commit ? 'commit' : 'rollback');
    return value;
  } catch (error) {
    await client.query('rollback').catch((e: Error) => (broken = e));
    throw error;
  } finally {
    // A connection that cannot even roll back is discarded rather than returned to the pool.
    client.release(broken);
  }
}

/** The tenant's rows and their version, read from one snapshot. */
export function readSnapshot(pool: pg.Pool, tenant: string): Promise<TenantSnapshot> {
  return transaction(pool, 'begin isolation level repeatable read read only', async (client) => {
    const version = await readVersion(client, tenant);
    const rows = async <R>(text: string) => (await client.query<R & unknown[]>({ text, values: [tenant], rowMode: 'array' })).rows as R[];
    const value: TenantSnapshot = {
      version,
      custom: version === 0 ? [] : await rows('select isin, key, value::text from data_custom_reference where tenant_id = $1'),
      inspirations: version === 0 ? [] : await rows('select id, name, description, type, xray_query from data_inspirations where tenant_id = $1'),
      universes: version === 0 ? [] : await rows('select universe_name, isin from data_universes where tenant_id = $1'),
    };
    return { value, commit: true };
  });
}

const BUMP = `insert into data_tenant_versions (tenant_id, version) values ($1, 1)
  on conflict (tenant_id) do update set version = data_tenant_versions.version + 1
  returning version`;

/**
 * Changes a tenant's data in one transaction that also bumps its version. The bump comes first:
 * its row lock makes the tenant's writers wait for each other, so `work` may read and then write.
 * When `changed` says the result changed nothing, the transaction rolls back (no new version).
 * Returns the result and the version it committed (undefined when rolled back).
 */
export function writeTenantData<T>(
  pool: pg.Pool,
  tenant: string,
  work: (client: pg.PoolClient) => Promise<T>,
  changed: (result: T) => boolean = () => true,
): Promise<{ result: T; version?: number }> {
  return transaction(pool, 'begin', async (client) => {
    const { rows } = await client.query<{ version: string }>(BUMP, [tenant]);
    const result = await work(client);
    const commit = changed(result);
    return { value: { result, version: commit ? Number(rows[0]!.version) : undefined }, commit };
  });
}
