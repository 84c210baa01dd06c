import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureDatabase } from '@platform/dev-stack/database';
import { type NatsServer } from '@platform/dev-stack/nats-server';
import { freePort } from '@platform/dev-stack/ports';
import { isRunning, stopProcess } from '@platform/dev-stack/processes';
import { waitReady } from '@platform/dev-stack/readiness';
import { newSigningKey } from '@platform/dev-stack/signing-key';
import { startOwnNats, testWorkDir } from '@platform/test-support/database';
import { SERVICE_NODE_OPTIONS } from '@platform/dev-stack/node-options';

// What production runs (docs/adr/0045-compiled-build.md): the compiled build, resolved through the
// `compiled` export condition, with no TypeScript loader in the process. Node.js 22.18 and later
// strip types from a .ts file by themselves: that is turned off here, so that an entry point that
// answers proves every module it loaded was compiled (docs/adr/0056-node-versions.md).

const root = fileURLToPath(new URL('../../', import.meta.url));
const PRODUCTION_NODE_OPTIONS = ['--conditions=compiled', '--enable-source-maps', ...SERVICE_NODE_OPTIONS, '--no-experimental-strip-types'].join(' ');
const run = promisify(execFile);
/** The environment of a production process: ours without any loader or condition of this test run. */
const productionEnv = (env: Record<string, string>) => ({ ...process.env, NODE_OPTIONS: PRODUCTION_NODE_OPTIONS, LOG_LEVEL: 'warn', ...env });
const node = (args: string[], env: Record<string, string> = {}) => run(process.execPath, args, { cwd: root, env: productionEnv(env) });

describe('the compiled build', function () {
  // The first build of a fresh checkout compiles every package; later ones only what changed.
  this.timeout(240_000);
  const work = mkdtempSync(join(tmpdir(), 'compiled-build-'));
  const children: ChildProcess[] = [];
  let nats: NatsServer | undefined;
  let database: { url: string; drop: () => Promise<void> } | undefined;

  before(async () => {
    await run('npm', ['run', '-s', 'build:server'], { cwd: root });
  });
  after(async () => {
    for (const child of children) await stopProcess(child, { name: 'compiled service', signal: 'SIGTERM', graceMs: 15_000, log: console.error });
    await nats?.stop();
    await database?.drop();
    rmSync(work, { recursive: true, force: true });
  });

  /** Spawns a compiled entry point and waits until it answers /readyz. */
  const startService = async (entry: string, env: Record<string, string>): Promise<ChildProcess> => {
    const port = await freePort();
    const child = spawn(process.execPath, [entry], {
      cwd: root,
      env: productionEnv({ HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: '0', ...env }),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    await waitReady(entry, `http://127.0.0.1:${port}`, 120_000, () => {
      if (!isRunning(child)) throw new Error(`${entry} exited (code ${child.exitCode})`);
    });
    assert.ok(!readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').includes('tsx'), 'no TypeScript loader in its arguments');
    return child;
  };

  it('a TypeScript source does not load in a production process, so what answers below was compiled', async () => {
    await assert.rejects(node(['cli/src/main.ts', '--help']), (error: Error & { stderr: string }) => /ERR_UNKNOWN_FILE_EXTENSION/.test(error.stderr));
  });

  it('the CLI answers --help and applies every migration of the three folders', async () => {
    const help = await node(['cli/dist/main.js', '--help']);
    assert.match(help.stdout, /^Usage: cli /);
    for (const command of ['migrate', 'tenant', 'bus-credentials', 'data']) assert.match(help.stdout, new RegExp(`^  ${command}\\b`, 'm'));

    database = await ensureDatabase(process.env.TEST_PG_ADMIN_URL!, `compiled_${process.pid}`, { fresh: true });
    const migrations = ['shared', 'management-service', 'data-service']
      .flatMap((folder) => readdirSync(join(root, folder, 'migrations')))
      .filter((file) => file.endsWith('.sql'))
      .sort();
    const first = JSON.parse((await node(['cli/dist/main.js', 'migrate'], { DATABASE_URL: database.url })).stdout) as { applied: string[] };
    assert.deepEqual([...first.applied].sort(), migrations);
    const again = JSON.parse((await node(['cli/dist/main.js', 'migrate'], { DATABASE_URL: database.url })).stdout) as { applied: string[] };
    assert.deepEqual(again.applied, [], 'nothing left to apply');
  });

  it('both services start from dist/ and answer /readyz (the data service with its worker threads loaded)', async () => {
    assert.ok(database, 'the migrated database of the test before');
    nats = await startOwnNats();
    await startService('management-service/dist/main.js', {
      DATABASE_URL: database.url,
      NATS_URL: nats.serviceUrls.management,
      JWT_PRIVATE_KEY: await newSigningKey(),
      MIGRATE_ON_START: 'false',
    });
    await startService('data-service/dist/main.js', {
      DATABASE_URL: database.url,
      NATS_URL: nats.serviceUrls.data,
      DUCKDB_PATH: join(work, 'data.duckdb'),
      REFERENCE_DIR: join(testWorkDir(), 'reference'),
    });
  });

  it("a thrown error's stack names the TypeScript file and line (source maps)", async () => {
    const source = readFileSync(join(root, 'data-service/src/workers/optimizer-pool.ts'), 'utf8').split('\n');
    const line = source.findIndex((text) => text.includes('throw new RangeError(`threads must be')) + 1;
    assert.ok(line > 0, 'the throw this test provokes is still there');
    const script = `import { optimizerPool } from '@platform/data-service/workers/optimizer-pool'; try { optimizerPool(0); } catch (e) { console.log(e.stack); }`;
    const { stdout } = await node(['--input-type=module', '-e', script]);
    assert.match(stdout, /^RangeError: threads must be/);
    assert.ok(stdout.includes(`data-service/src/workers/optimizer-pool.ts:${line}:`), stdout);
    assert.ok(!stdout.includes('/dist/'), 'no compiled path in the stack');
  });
});
