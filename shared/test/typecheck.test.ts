import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

describe('the code base', function () {
  this.timeout(180_000);

  it('typechecks (tsc, strict) — tsx runs the code without checking types', async () => {
    const root = new URL('../../', import.meta.url).pathname;
    const result = await promisify(execFile)(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { cwd: root }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    assert.equal(result, '', result);
  });
});
