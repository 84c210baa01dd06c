// `npm run image:test`: the platform run from its production image and tested from outside
// (docs/adr/0048-image-test.md). Postgres and NATS start as for `npm test`; the template database is
// migrated by the image's CLI in a container; every test platform's two services run as containers
// of the image (PLATFORM_IMAGE); the journeys below and the image's own checks run against them.
// Writes bench/results/image-test.json and .md.
//
//   npm run image:test                           localhost/investment-platform:<version>
//   npm run image:test -- --image <reference>
//   npm run image:test -- e2e/image/container.test.ts    only the files named
//   npm run image:test -- --stand-in localhost/debian-base:bookworm
//       a bare base image with this repository's sources mounted (no built image needed; the
//       checks of the image itself are skipped)
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { newUlid } from '@platform/shared';
import { ensurePodman } from '@platform/dev-stack/podman';
import { containerRun, sourcesInBaseImage } from '@platform/dev-stack/service-container';
import { prepareTestRun, runMocha, type TestRun } from '../lib/test-run.ts';
import { writeImageTestRecord, type ImageTestRecord } from './test-record.ts';

/** The journeys that need nothing of a service but its ports, and the image's own checks. */
const IMAGE_TEST_FILES = [
  'e2e/test/onboarding-journey.test.ts',
  'e2e/test/funding/client-broker.test.ts',
  'e2e/test/funding/service-broker.test.ts',
  'e2e/test/robo-journey.test.ts',
  'e2e/test/data/reference.test.ts',
  'e2e/test/data/analysis.test.ts',
  'e2e/image/container.test.ts',
];

const log = (line: string) => console.log(`[image:test] ${line}`);
const seconds = (since: number) => Math.round((performance.now() - since) / 10) / 100;

const { values, positionals } = parseArgs({ options: { image: { type: 'string' }, 'stand-in': { type: 'string' } }, allowPositionals: true });
const files = positionals.length ? positionals : IMAGE_TEST_FILES;
const standIn = values['stand-in'] !== undefined;

/** The image `npm run image:build` tags with the root package's version. */
function builtImage(): string {
  const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version?: string }).version;
  if (!version) {
    console.error('[image:test] package.json has no version, which the image is tagged with: name the image with --image');
    process.exit(1);
  }
  return `localhost/investment-platform:${version}`;
}
const image = values['stand-in'] ?? values.image ?? process.env.PLATFORM_IMAGE ?? builtImage();

const podman = ensurePodman(log);
try {
  podman.run(['image', 'exists', image]);
} catch {
  console.error(`[image:test] ${image} is not among podman's images: build it with \`npm run image:build\` (or name one with --image)`);
  process.exit(1);
}
const [imageId, size, revision] = podman
  .run(['image', 'inspect', '--format', '{{.Id}} {{.Size}} {{index .Labels "org.opencontainers.image.revision"}}', image])
  .split(' ');
const sizeMb = Math.round(Number(size) / 1e6);
log(`testing ${image} (${sizeMb} MB)${standIn ? ', a stand-in running this repository’s sources' : ''}`);

/** The image's CLI applies the migrations, in a container confined as the services are. */
function migrateWithImage(databaseUrl: string): void {
  const command = standIn ? ['node', '--import', 'tsx', 'cli/src/main.ts', 'migrate'] : ['node', 'cli/dist/main.js', 'migrate'];
  const { args, env } = containerRun(
    { podman, image, runOptions: standIn ? sourcesInBaseImage.runOptions : undefined },
    { name: `platform-migrate-${newUlid().toLowerCase()}`, env: { DATABASE_URL: databaseUrl }, command },
  );
  const out = execFileSync('podman', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 });
  log(`migrate: ${out.replace(/\s+/g, ' ').trim().slice(0, 300)}`);
}

const phases: ImageTestRecord['seconds'] = { migration: 0, journeys: 0 };
const figuresFile = join(tmpdir(), `platform-image-test-${process.pid}.json`);
let run: TestRun | undefined;
let exitCode = 1;
let mochaOutput = '';
try {
  run = await prepareTestRun({
    log,
    migrateTemplate: async (url) => {
      const started = performance.now();
      migrateWithImage(url);
      phases.migration = seconds(started);
    },
  });
  const started = performance.now();
  exitCode = await runMocha(
    [],
    {
      ...run.env,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      TEST_FILES: files.join('\n'),
      PLATFORM_IMAGE: image,
      ...(standIn ? { PLATFORM_IMAGE_STAND_IN: '1' } : {}),
      IMAGE_TEST_FIGURES: figuresFile,
    },
    (line) => console.error(`[image:test] ${line}`),
    Number(process.env.TEST_WATCHDOG_MINUTES ?? 25),
    (text) => (mochaOutput += text),
  );
  phases.journeys = seconds(started);
} catch (error) {
  console.error(`[image:test] ${(error as Error).message}`);
} finally {
  await run?.cleanup();
}

// Every container a test started is removed by the end, whichever way its test ended.
const left = podman.run(['ps', '--all', '--filter', 'name=^platform-', '--format', '{{.Names}}']).split('\n').filter(Boolean);
if (left.length) {
  console.error(`[image:test] containers left behind: ${left.join(', ')}; removing them`);
  podman.run(['rm', '--force', '--time=0', ...left]);
  exitCode = 1;
}

let measured: Record<string, number> = {};
try {
  measured = JSON.parse(readFileSync(figuresFile, 'utf8')) as Record<string, number>;
  rmSync(figuresFile);
} catch {
  // The image's checks did not get as far as measuring.
}
const count = (word: string) => Number(new RegExp(`(\\d+) ${word}`).exec(mochaOutput)?.[1] ?? 0);
const record: ImageTestRecord = {
  date: new Date().toISOString(),
  image,
  imageId: imageId!.slice(0, 12),
  revision: revision && revision !== '<no value>' ? revision : undefined,
  standIn,
  imageSizeMb: sizeMb,
  files,
  tests: { passing: count('passing'), failing: count('failing'), pending: count('pending') },
  exitCode,
  containersLeft: left,
  seconds: {
    ...phases,
    ...Object.fromEntries(Object.entries(measured).map(([key, value]) => [key.replace(/_seconds$/, ''), Math.round(value * 100) / 100])),
  },
};
writeImageTestRecord('bench/results/image-test', record);
log(`${record.tests.passing} passing, ${record.tests.failing} failing; record in bench/results/image-test.json`);
process.exit(exitCode);
