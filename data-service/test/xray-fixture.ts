// A small reference file with known rows, independent of the sample generator: X-Ray, smart-search
// and inspiration tests compute their expectations from these rows by hand.
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { newUlid } from '@platform/shared';
import { testWorkDir } from '@platform/test-support/database';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { buildReferenceFile } from '../src/store/reference-files.ts';
import { seedTenantUniverses, type TenantUniverse } from './support/tenant-data.ts';

export type FixtureInstrument = {
  isin: string;
  name: string;
  region: string;
  sector: string;
  size: string;
  price: number | null;
  target: number | null;
  dividendYield: number | null;
  /** Raw metrics; undefined: no factor_metrics row at all. */
  metrics?: { value: number | null; growth: number | null };
};

export const isin = (n: number) => `XA${String(n).padStart(10, '0')}`;

const row = (
  n: number,
  region: string,
  sector: string,
  size: string,
  price: number | null,
  target: number | null,
  dividendYield: number | null,
  metrics?: FixtureInstrument['metrics'],
): FixtureInstrument => ({
  isin: isin(n),
  name: `Instrument ${n}`,
  region,
  sector,
  size,
  price,
  target,
  dividendYield,
  metrics,
});

/**
 * I1…I12. VALUE: 10…100 for I1…I10, null for I11, no metrics row for I12. GROWTH has ties (three
 * 5s, two 9s). Upward potential (target / price − 1): .1, .2, −.05, null (no target), .5, null
 * (price 0), .25, .25, .1, .4, null (no price), .2.
 */
export const INSTRUMENTS: FixtureInstrument[] = [
  row(1, 'EU', 'TECH', 'LARGE', 100, 110, 0.01, { value: 10, growth: 5 }),
  row(2, 'EU', 'TECH', 'SMALL', 50, 60, 0.03, { value: 20, growth: 5 }),
  row(3, 'EU', 'FIN', 'LARGE', 20, 19, 0.05, { value: 30, growth: 5 }),
  row(4, 'EU', 'FIN', 'SMALL', 10, null, 0.02, { value: 40, growth: 1 }),
  row(5, 'US', 'TECH', 'LARGE', 100, 150, null, { value: 50, growth: 2 }),
  row(6, 'US', 'TECH', 'SMALL', 0, 10, 0.04, { value: 60, growth: 3 }),
  row(7, 'US', 'FIN', 'LARGE', 40, 50, 0.035, { value: 70, growth: 9 }),
  row(8, 'US', 'FIN', 'SMALL', 80, 100, 0, { value: 80, growth: 9 }),
  row(9, 'EU', 'TECH', 'LARGE', 30, 33, 0.06, { value: 90, growth: 7 }),
  row(10, 'US', 'FIN', 'LARGE', 25, 35, 0.025, { value: 100, growth: 8 }),
  row(11, 'EU', 'FIN', 'SMALL', null, 10, 0.045, { value: null, growth: 4 }),
  row(12, 'US', 'TECH', 'SMALL', 10, 12, 0.015),
];

/** Platform universes: GLOBAL holds all twelve, ROBO six of them. */
export const PLATFORM_UNIVERSES: Record<string, number[]> = {
  GLOBAL: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
  ROBO: [1, 2, 3, 9, 10, 11],
};

/** Writes a reference file of `instruments` (default the fixture) into `dir`. */
export async function buildFixtureReference(dir: string, instruments = INSTRUMENTS, universes = PLATFORM_UNIVERSES): Promise<string> {
  return buildReferenceFile(dir, 'fixture', async (conn: DuckDBConnection) => {
    for (const i of instruments) {
      await conn.run(
        `insert into instruments (isin, name, region, sector, size_label, asset_class, currency, price, analyst_target_price, dividend_yield, price_date)
         values ($1, $2, $3, $4, $5, 'EQUITY', 'EUR', $6::decimal(20, 6), $7::decimal(20, 6), $8::double, date '2025-01-02')`,
        [i.isin, i.name, i.region, i.sector, i.size, i.price, i.target, i.dividendYield],
      );
      if (i.metrics) {
        await conn.run('insert into factor_metrics (isin, value, growth) values ($1, $2::double, $3::double)', [i.isin, i.metrics.value, i.metrics.growth]);
      }
    }
    for (const [name, members] of Object.entries(universes)) {
      for (const n of members) await conn.run('insert into universes values ($1, $2)', [name, isin(n)]);
    }
  });
}

export type FixturePlatform = { platform: TestPlatform; referenceDir: string };

/**
 * The platform on the fixture's reference data. Tenant universes live in Postgres, which refers
 * them to their tenant: each tenant's are written as soon as `platform.tenant(id)` has created it.
 */
export async function startFixturePlatform(universes: TenantUniverse[] = [], env: Record<string, string> = {}): Promise<FixturePlatform> {
  const dir = await mkdtemp(join(testWorkDir(), 'xray-'));
  const referenceDir = join(dir, 'reference');
  const path = join(dir, `data-${newUlid()}.duckdb`);
  await buildFixtureReference(referenceDir);
  const platform = await startTestPlatform({ REFERENCE_DIR: referenceDir, DUCKDB_PATH: path, REFERENCE_RELOAD_MS: '0', ...env });
  const createTenant = platform.tenant;
  platform.tenant = async (...args) => {
    const tenant = await createTenant(...args);
    await seedTenantUniverses(
      platform.database,
      universes.filter((u) => u.tenant === tenant.tenantId),
    );
    return tenant;
  };
  return { platform, referenceDir };
}

/** A tenant id chosen before the platform starts (so that its universes can be named first). */
export const tenantId = (label: string) => `t-${label}-${newUlid().toLowerCase()}`;
