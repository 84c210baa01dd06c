import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { testWorkDir } from '@platform/test-support/database';
import { buildReferenceFile } from '../../src/store/reference-files.ts';
import type { TenantUniverse } from './tenant-data.ts';

/** A row of the reference `instruments` table; columns left out are null. */
export type FixtureInstrument = {
  isin: string;
  name: string;
  ticker?: string;
  asset_class?: string;
  asset_subclass?: string;
  instrument_type?: string;
  currency?: string;
  country?: string;
  region?: string;
  sector?: string;
  exchange?: string;
  market_cap?: number;
  size_label?: string;
  price?: number;
  /** YYYY-MM-DD */
  price_date?: string;
  dividend_yield?: number;
  ter?: number;
  analyst_target_price?: number;
};

export type Fixture = {
  instruments: readonly FixtureInstrument[];
  /** Built-in universes of the reference file: name → ISINs. */
  universes?: Record<string, readonly string[]>;
  /** Universes of tenants, written to Postgres by the test once the tenants exist (seedTenantUniverses). */
  tenantUniverses?: TenantUniverse[];
};

async function insertRow(conn: DuckDBConnection, table: string, row: Record<string, string | number>): Promise<void> {
  const columns = Object.keys(row);
  await conn.run(`insert into ${table} (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')})`, Object.values(row));
}

/**
 * A reference directory holding one reference file with exactly the fixture's rows, and the path of
 * a new replica database. Start the platform with the returned `env`. (Tenant universes live in
 * Postgres: seed them with `seedTenantUniverses` once the tenants exist.)
 */
export async function buildFixture(fixture: Fixture): Promise<{ env: Record<string, string>; referenceDir: string; replicaPath: string }> {
  const dir = await mkdtemp(join(testWorkDir(), 'reference-fixture-'));
  const referenceDir = join(dir, 'reference');
  await buildReferenceFile(referenceDir, 'fixture', async (conn) => {
    for (const instrument of fixture.instruments) await insertRow(conn, 'instruments', instrument);
    for (const [name, isins] of Object.entries(fixture.universes ?? {})) {
      for (const isin of isins) await insertRow(conn, 'universes', { universe_name: name, isin });
    }
  });
  const replicaPath = join(dir, 'replica.duckdb');
  return { env: { REFERENCE_DIR: referenceDir, DUCKDB_PATH: replicaPath, REFERENCE_RELOAD_MS: '0' }, referenceDir, replicaPath };
}

export const TENANT_A = 'ref-tenant-a';
export const TENANT_B = 'ref-tenant-b';
/** An ISIN in tenant A's own universe that the provider does not know. */
export const UNKNOWN_TO_PROVIDER = 'XS0000000009';

/**
 * Known rows covering every field type: full records, one with nothing but a name, names longer
 * and shorter than DuckDB's 12 inlined bytes, non-ASCII text, prices kept as decimals.
 */
export const KNOWN: Fixture = {
  instruments: [
    {
      isin: 'IE00B4L5Y983',
      name: 'iShares Core MSCI World UCITS ETF USD (Acc)',
      ticker: 'SWDA',
      asset_class: 'EQUITY',
      asset_subclass: 'GLOBAL_EQUITY',
      instrument_type: 'ETF',
      currency: 'USD',
      country: 'IE',
      region: 'GLOBAL',
      sector: 'DIVERSIFIED',
      exchange: 'XLON',
      market_cap: 95_000_000_000,
      size_label: 'LARGE',
      price: 98.42,
      price_date: '2025-03-14',
      ter: 0.002,
      analyst_target_price: 101.5,
    },
    {
      isin: 'US0378331005',
      name: 'Apple Inc.',
      ticker: 'AAPL',
      asset_class: 'EQUITY',
      asset_subclass: 'COMMON_STOCK',
      instrument_type: 'STOCK',
      currency: 'USD',
      country: 'US',
      region: 'NORTH_AMERICA',
      sector: 'INFORMATION_TECHNOLOGY',
      exchange: 'XNAS',
      market_cap: 3.2e12,
      size_label: 'LARGE',
      price: 213.49,
      price_date: '2025-03-14',
      dividend_yield: 0.0045,
      analyst_target_price: 245.123456,
    },
    { isin: 'DE0005140008', name: 'Deutsche Bank AG' },
    {
      isin: 'NL0010273215',
      name: 'ASML',
      ticker: 'ASML',
      asset_class: 'EQUITY',
      instrument_type: 'STOCK',
      currency: 'EUR',
      country: 'NL',
      region: 'EUROPE',
      sector: 'INFORMATION_TECHNOLOGY',
      exchange: 'XAMS',
      market_cap: 2.5e11,
      size_label: 'LARGE',
      price: 612.3,
      price_date: '1969-12-31',
      dividend_yield: 0.011,
    },
    {
      isin: 'FR0000130809',
      name: 'Société Générale S.A. — Ordinary shares',
      ticker: 'GLE',
      asset_class: 'EQUITY',
      instrument_type: 'STOCK',
      currency: 'EUR',
      country: 'FR',
      region: 'EUROPE',
      sector: 'FINANCIALS',
      exchange: 'XPAR',
      market_cap: 2.1e10,
      size_label: 'MID',
      price: 0.000001,
      price_date: '2025-01-02',
      dividend_yield: 0.052,
      analyst_target_price: 30,
    },
    { isin: 'US5949181045', name: 'Microsoft Corporation', ticker: 'MSFT', currency: 'USD', price: 380, price_date: '2025-03-14' },
  ],
  universes: {
    GLOBAL: ['IE00B4L5Y983', 'US0378331005', 'DE0005140008', 'NL0010273215', 'FR0000130809'],
    ROBO: ['US0378331005', 'IE00B4L5Y983'],
    DEFAULT: ['DE0005140008'],
  },
  tenantUniverses: [{ tenant: TENANT_A, name: 'HOUSE', isins: ['US5949181045', 'NL0010273215', UNKNOWN_TO_PROVIDER] }],
};
