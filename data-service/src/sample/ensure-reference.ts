import type { Logger } from '@platform/shared';
import { generateSample } from './generate.ts';
import { buildReferenceFile, newestReferenceFile } from '../store/reference-files.ts';

/**
 * A replica needs a reference file to attach. When the directory has none, it gets the generated
 * sample universe (SAMPLE_DATA=true, as `npm start` does) or an empty one, so the service starts and
 * answers until the first ingest.
 */
export type ReferenceStartSettings = { REFERENCE_DIR: string; SAMPLE_DATA: boolean; SAMPLE_INSTRUMENTS: number; SAMPLE_YEARS: number };

export async function ensureReferenceData(config: ReferenceStartSettings, logger: Logger): Promise<void> {
  if (await newestReferenceFile(config.REFERENCE_DIR)) return;
  if (!config.SAMPLE_DATA) {
    logger.warn('no reference data yet: starting with an empty reference file', { dir: config.REFERENCE_DIR });
    await buildReferenceFile(config.REFERENCE_DIR, 'empty', async () => undefined);
    return;
  }
  const started = Date.now();
  const file = await buildReferenceFile(config.REFERENCE_DIR, 'sample', (conn) =>
    generateSample(conn, { instruments: config.SAMPLE_INSTRUMENTS, years: config.SAMPLE_YEARS, seed: 42 }),
  );
  logger.info('sample universe generated', { file, instruments: config.SAMPLE_INSTRUMENTS, years: config.SAMPLE_YEARS, ms: Date.now() - started });
}
