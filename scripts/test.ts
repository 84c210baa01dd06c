// `npm test`: lint and format checks first (whole suite only), then starts Postgres and NATS for this run on free loopback ports (unless DATABASE_URL /
// NATS_URL name servers to use), migrates a template database that every test file clones,
// generates a small sample reference file, runs mocha (extra arguments pass through:
// `npm test -- --grep login`; test files named run instead of the whole suite:
// `npm test -- management-service/test/auth.test.ts`) and stops everything after.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureInstalled } from '@platform/dev-stack/os-packages';
import { exitUnlessSupportedNode } from '@platform/shared';
import { prepareTestRun, runMocha, type TestRun } from './lib/test-run.ts';

const log = (line: string) => console.log(`[test] ${line}`);
const WATCHDOG_MINUTES = Number(process.env.TEST_WATCHDOG_MINUTES ?? 25);

/** Whether the run includes the console's browser tests: the whole suite, or a file of them named (`console-*.test.ts`). */
const browserTests = (files: string[]) => files.length === 0 || files.some((file) => /(^|\/)console-[^/]*\.test\.ts$/.test(file));

/**
 * The browser tests drive Debian's Chromium (installed when missing and this process may) through
 * the console that the management service serves from console/dist (built here when missing or
 * older than a source of it, so that the tests see the console as it is written).
 */
function prepareBrowser(): Record<string, string> {
  const built = existsSync('console/dist/index.html') ? statSync('console/dist/index.html').mtimeMs : 0;
  const sources = ['console/index.html', ...readdirSync('console/src', { recursive: true, encoding: 'utf8' }).map((f) => join('console/src', f))];
  if (sources.some((f) => statSync(f).mtimeMs > built)) {
    log('console/dist is missing or older than console/src: building the console (npm run build:console)');
    const build = spawnSync('npm', ['run', '-s', 'build:console'], { stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build:console failed: the browser tests need the built console');
  }
  const chromium = ensureInstalled('chromium', 'chromium', log, 'to run the browser tests of the console');
  const path = spawnSync('sh', ['-c', `command -v ${chromium}`], { encoding: 'utf8' }).stdout.trim();
  return { TEST_CHROMIUM: path || '/usr/bin/chromium' };
}

/** Lint and format checks; they run before the whole suite, not when only some tests are asked for. */
function codeChecksPass(): boolean {
  const checks: [name: string, script: string][] = [
    ['lint', 'lint'],
    ['format', 'format:check'],
    // Both overlays rendered and every object validated against the Kubernetes schemas, offline.
    ['Kubernetes manifests', 'k8s:check'],
  ];
  for (const [name, script] of checks) {
    log(`npm run ${script}`);
    const run = spawnSync('npm', ['run', '-s', script], { stdio: 'inherit' });
    if (run.status !== 0) {
      console.error(`[test] ${name} check failed: fix what it says (npm run lint -- --fix, npm run format) and run again`);
      return false;
    }
  }
  return true;
}

exitUnlessSupportedNode('npm test', process, (line) => console.error(`[test] ${line}`));
let exitCode = 1;
const args = process.argv.slice(2);
if (args.length === 0 && !codeChecksPass()) process.exit(1);
let run: TestRun | undefined;
try {
  const files = args.filter((a) => a.endsWith('.ts'));
  run = await prepareTestRun({ log });
  const env = { ...run.env, ...(browserTests(files) ? prepareBrowser() : {}) };
  exitCode = await runMocha(
    args.filter((a) => !a.endsWith('.ts')),
    { ...env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'error', ...(files.length ? { TEST_FILES: files.join('\n') } : {}) },
    (line) => console.error(`[test] ${line}`),
    WATCHDOG_MINUTES,
  );
} catch (error) {
  console.error(`[test] ${(error as Error).message}`);
} finally {
  await run?.cleanup();
}
process.exit(exitCode);
