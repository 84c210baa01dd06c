// The record `npm run image:test` leaves in bench/results/: what was tested, what passed, how long
// each phase took (figures, not assertions: docs/adr/0033-load-and-chaos-benchmarks.md).
import { writeFileSync } from 'node:fs';

export type ImageTestRecord = {
  date: string;
  image: string;
  imageId: string;
  /** The source revision the image was built from (its OCI label), when it has one. */
  revision?: string;
  /** A bare base image with the repository's sources mounted stood in for the built image. */
  standIn: boolean;
  imageSizeMb: number;
  files: string[];
  tests: { passing: number; failing: number; pending: number };
  exitCode: number;
  /** Containers still there once the run had stopped everything (none expected). */
  containersLeft: string[];
  /** migration, journeys (the whole mocha run), and what the image's checks measured per service. */
  seconds: Record<string, number>;
};

const labels: Record<string, string> = {
  migration: 'migration (the image’s CLI in a container)',
  journeys: 'journeys and checks (the whole mocha run, every platform started and stopped)',
  management_stop: 'management service: `podman stop` to exit 0 (SIGTERM)',
  data_stop: 'data service: `podman stop` to exit 0 (SIGTERM)',
  management_start_to_ready: 'management service: container start to /readyz 200',
  data_start_to_ready: 'data service: container start to /readyz 200',
};

export function renderImageTestRecord(record: ImageTestRecord): string {
  const lines = [
    '### Image test (`npm run image:test`)',
    '',
    `${record.date}: \`${record.image}\` (id ${record.imageId}${record.revision ? `, revision ${record.revision}` : ''}, ${record.imageSizeMb} MB)${record.standIn ? ', a stand-in base image running the repository’s sources' : ''}; ` +
      `**${record.tests.passing} passing, ${record.tests.failing} failing, ${record.tests.pending} pending** (exit code ${record.exitCode}); ` +
      `containers left behind: ${record.containersLeft.length ? record.containersLeft.join(', ') : 'none'}.`,
    '',
    'Files: ' + record.files.map((f) => `\`${f}\``).join(', ') + '.',
    '',
    '| phase | seconds |',
    '|---|---|',
    ...Object.entries(record.seconds).map(([key, value]) => `| ${labels[key] ?? key} | ${value} |`),
    '',
  ];
  return lines.join('\n');
}

/** Writes `<base>.json` and `<base>.md`. */
export function writeImageTestRecord(base: string, record: ImageTestRecord): void {
  writeFileSync(`${base}.json`, JSON.stringify(record, null, 2) + '\n');
  writeFileSync(`${base}.md`, renderImageTestRecord(record));
}
