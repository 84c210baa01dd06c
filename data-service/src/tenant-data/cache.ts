// Tenants' data (universes, custom values, inspirations): written to Postgres, cached in DuckDB.
import type { DuckDBConnection } from '@duckdb/node-api';
import type pg from 'pg';
import type { Logger } from '@platform/shared';
import { InvalidValue } from '../domain/errors.ts';
import { Outage } from '../domain/outage.ts';
import type { DuckStore } from '../store/duckdb.ts';
import { readSnapshot, readVersion, writeTenantData, type TenantSnapshot } from './postgres.ts';

/** A change of a tenant's data: how it is written to Postgres, and how the same change is made to this replica's cache. */
export type TenantChange<T> = {
  postgres: (client: pg.PoolClient) => Promise<T>;
  /** False when the result shows that nothing changed: the transaction rolls back and no version is spent. */
  changed?: (result: T) => boolean;
  local: (conn: DuckDBConnection, result: T) => Promise<unknown>;
};

/**
 * This replica's DuckDB tables custom_reference, inspirations and universes as a per-tenant cache of
 * Postgres (tenant-data/postgres.ts), with the version loaded for each tenant kept in memory.
 *
 * Reads: `ensureFresh` before a request reads a tenant's data costs one indexed Postgres read; when
 * the tenant's version is not the loaded one, its rows are reloaded from one Postgres snapshot
 * (under a per-tenant lock, so concurrent requests reload once). Writes go to Postgres first, in a
 * transaction that bumps the version; then the same change is made locally when the cache held
 * exactly the version before the write, otherwise the tenant is marked stale and its next read
 * reloads. Every replica therefore answers with what Postgres holds when the request started,
 * including the writes made through other replicas.
 *
 * While Postgres does not answer, `outage` decides whether a tenant loaded before is served from
 * its cached rows (degraded, for a bounded time) or refused; a tenant this replica never loaded is
 * refused (docs/adr/0025-data-service-degraded.md). Writes always need Postgres.
 */
export class TenantCache {
  private readonly loaded = new Map<string, number>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private reloadCount = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly duck: DuckStore,
    private readonly logger: Logger,
    /** Default: never serve cached rows while Postgres does not answer. */
    private readonly outage: Outage = new Outage(0, Date.now),
  ) {}

  /**
   * Brings the tenant's cached rows to Postgres's current version; returns that version (0: no
   * data). While Postgres does not answer and the replica is degraded: the version loaded before.
   */
  ensureFresh(tenant: string): Promise<number> {
    return this.outage.read(
      () => this.refresh(tenant),
      () => this.loaded.get(tenant),
    );
  }

  private async refresh(tenant: string): Promise<number> {
    const current = await readVersion(this.pool, tenant);
    if (this.loaded.get(tenant) === current) return current;
    return this.locked(tenant, async () => {
      const loaded = this.loaded.get(tenant);
      // Another request reloaded while this one waited.
      if (loaded === current) return loaded;
      const snapshot = await readSnapshot(this.pool, tenant);
      await this.duck.use(({ conn }) => inTransaction(conn, () => replaceTenantRows(conn, tenant, snapshot)));
      this.loaded.set(tenant, snapshot.version);
      this.reloadCount++;
      return snapshot.version;
    });
  }

  /** Writes a change to Postgres and then to this replica's cache; returns what the Postgres part returned. */
  async write<T>(tenant: string, change: TenantChange<T>): Promise<T> {
    const { result, version } = await writeTenantData(this.pool, tenant, change.postgres, change.changed).catch((error: Error & { code?: string }) => {
      // Postgres text and jsonb cannot hold U+0000 (DuckDB could).
      if (error.code === '22P05' || error.code === '22021') throw new InvalidValue(['body'], 'text may not contain the character U+0000');
      throw error;
    });
    if (version === undefined) return result;
    await this.locked(tenant, async () => {
      const loaded = this.loaded.get(tenant);
      if (loaded === version) return; // a reload already read it
      this.loaded.delete(tenant);
      if (loaded !== version - 1) return; // the cache missed other writes: the next read reloads
      try {
        await this.duck.use(({ conn }) => inTransaction(conn, () => change.local(conn, result)));
        this.loaded.set(tenant, version);
      } catch (error) {
        // Postgres holds the write; the tenant stays stale and its next read reloads.
        this.logger.warn('tenant data written, but not to the local cache; it reloads on the next read', { tenant, error: (error as Error).message });
      }
    });
    return result;
  }

  stats() {
    return { tenants: this.loaded.size, reloads: this.reloadCount };
  }

  /** Runs `work` after every earlier locked work of the tenant has finished. */
  private locked<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    const run = (this.locks.get(tenant) ?? Promise.resolve()).then(work);
    const tail = run.catch(() => undefined);
    this.locks.set(tenant, tail);
    void tail.then(() => {
      if (this.locks.get(tenant) === tail) this.locks.delete(tenant);
    });
    return run;
  }
}

async function inTransaction<T>(conn: DuckDBConnection, work: () => Promise<T>): Promise<T> {
  await conn.run('begin transaction');
  try {
    const result = await work();
    await conn.run('commit');
    return result;
  } catch (error) {
    await conn.run('rollback').catch(() => undefined);
    throw error;
  }
}

/** Replaces the tenant's rows of the three tables with the snapshot's, appended in bulk (binding 100,000s of rows as parameters costs seconds). */
async function replaceTenantRows(conn: DuckDBConnection, tenant: string, snapshot: TenantSnapshot): Promise<void> {
  for (const table of ['custom_reference', 'inspirations', 'universes']) {
    await conn.run(`delete from ${table} where tenant_id = $1`, [tenant]);
  }
  const append = async (table: string, rows: string[][]) => {
    if (rows.length === 0) return;
    const appender = await conn.createAppender(table);
    try {
      for (const row of rows) {
        appender.appendVarchar(tenant);
        for (const cell of row) appender.appendVarchar(cell);
        appender.endRow();
      }
    } finally {
      appender.closeSync();
    }
  };
  await append('custom_reference', snapshot.custom);
  await append('inspirations', snapshot.inspirations);
  await append('universes', snapshot.universes);
}
