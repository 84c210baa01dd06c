import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// Each entry point refuses a Node.js older than the platform supports before it starts anything
// (docs/adr/0056-node-versions.md). The process runs on this Node.js, told it is 20.20.2, the
// version of a machine that has only Node 20.

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const AS_NODE_20 = `data:text/javascript,Object.defineProperty(process, 'version', { value: 'v20.20.2' })`;

/** Runs `entry` through tsx as Node.js 20.20.2 and returns how it ended. */
async function runAsNode20(entry: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', '--import', AS_NODE_20, entry], {
      cwd: root,
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout: string; stderr: string };
    return { code: failed.code ?? -1, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('an entry point on an unsupported Node.js', function () {
  this.timeout(120_000);
  const work = mkdtempSync(join(tmpdir(), 'node-version-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  for (const [program, entry, prefix] of [
    ['management-service', 'management-service/src/main.ts', ''],
    ['data-service', 'data-service/src/main.ts', ''],
    ['cli', 'cli/src/main.ts', ''],
    ['npm start', 'scripts/start.ts', '[start] '],
  ] as const) {
    it(`${program} exits with 1 and says which Node.js it needs and how to get it, having started nothing`, async () => {
      const data = join(work, program.replace(' ', '-'));
      const ended = await runAsNode20(entry, { PLATFORM_DATA_DIR: data, LOG_LEVEL: 'info' });
      assert.equal(ended.code, 1, ended.stderr);
      assert.equal(ended.stdout, '', 'no log line: nothing started');
      const lines = ended.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line, no stack trace: ${ended.stderr}`);
      assert.ok(lines[0]!.startsWith(`${prefix}${program} needs Node.js ^22.19.0 || >=24; this is Node.js v20.20.2.`), lines[0]);
      assert.match(lines[0]!, /npm ci/);
      assert.equal(existsSync(data), false, 'no data folder made');
    });
  }
});
