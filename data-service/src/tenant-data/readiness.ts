import type pg from 'pg';
import { isUnavailable } from '@platform/shared';
import type { Outage } from '../domain/outage.ts';

/** Longest wait of /readyz for Postgres: below the readiness probe's time-out (k8s: 3 s), so a degraded replica answers in time. */
const READINESS_WAIT_MS = 2_000;

/**
 * The Postgres check of /readyz: 'ok' when it answers, 'degraded' while it does not and `outage`
 * lets the replica serve from its cache (it stays behind the load balancer,
 * docs/adr/0025-data-service-degraded.md); throws otherwise, also before the management service has
 * migrated the data service's tables. A server that does not answer within READINESS_WAIT_MS
 * counts as away.
 */
export async function postgresReadiness(pool: pg.Pool, outage: Outage, waitMs = READINESS_WAIT_MS): Promise<'ok' | 'degraded'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`Postgres did not answer within ${waitMs} ms`), { code: 'ETIMEDOUT' })), waitMs);
  });
  try {
    await Promise.race([pool.query('select 1 from data_tenant_versions limit 1'), late]);
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    outage.unreachable();
    if (outage.mode() === 'degraded') return 'degraded';
    throw error;
  } finally {
    clearTimeout(timer);
  }
  outage.reachable();
  return 'ok';
}
