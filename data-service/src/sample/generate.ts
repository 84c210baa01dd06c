import type { DuckDBConnection } from '@duckdb/node-api';

export type SampleOptions = { instruments: number; years: number; seed: number };

/** Fills a new reference file with the labelled sample universe. */
export async function generateSample(_conn: DuckDBConnection, _options: SampleOptions): Promise<void> {
  throw new Error('The sample universe generator is not built yet.');
}
