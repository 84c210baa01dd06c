import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

describe('the code base', function () {
  this.timeout(180_000);

  // The console's page code has the browser's types (DOM) and no Node.js; its tests have both.
  for (const project of ['tsconfig.json', 'console/tsconfig.json', 'console/test/tsconfig.json']) {
    it(`typechecks ${project} (tsc, strict) — tsx and Vite run the code without checking types`, async () => {
      const root = new URL('../../', import.meta.url).pathname;
      const result = await promisify(execFile)(process.execPath, ['node_modules/typescript/bin/tsc', '-p', project], { cwd: root }).then(
        () => '',
        (error: { stdout: string }) => error.stdout,
      );
      assert.equal(result, '', result);
    });
  }
});
