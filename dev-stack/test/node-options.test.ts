import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AsyncLocalStorage } from 'node:async_hooks';
import { SERVICE_NODE_OPTIONS } from '@platform/dev-stack/node-options';
import { nodeLauncher } from '@platform/dev-stack/service-process';

const run = promisify(execFile);

// The implementation of AsyncLocalStorage that hooks every promise has these two methods; the one
// on AsyncContextFrame has neither (docs/adr/0064-async-context-frame.md).
const PROMISE_HOOK_METHODS = `['_enable', '_propagate'].filter((m) => m in require('node:async_hooks').AsyncLocalStorage.prototype).join(',')`;

describe("services' options of node", () => {
  it('runs AsyncLocalStorage on AsyncContextFrame in a process started with them, not on promise hooks', async () => {
    const withOptions = await run(process.execPath, [...SERVICE_NODE_OPTIONS, '-p', PROMISE_HOOK_METHODS]);
    assert.equal(withOptions.stdout.trim(), '');
    if (SERVICE_NODE_OPTIONS.length > 0) {
      // On Node.js 22 the option is what makes the difference.
      const without = await run(process.execPath, ['-p', PROMISE_HOOK_METHODS], { env: { ...process.env, NODE_OPTIONS: '' } });
      assert.equal(without.stdout.trim(), '_enable,_propagate');
    }
  });

  it('starts every service process with them, and the test process, which runs some services in itself, runs with them too', () => {
    const launch = nodeLauncher({ name: 'management', service: 'management', port: 1, env: {}, nodeArgs: ['--inspect=0'] });
    assert.deepEqual(launch.args.slice(0, SERVICE_NODE_OPTIONS.length + 1), [...SERVICE_NODE_OPTIONS, '--inspect=0']);
    assert.ok(!('_propagate' in AsyncLocalStorage.prototype), 'the test process (.mocharc.cjs) runs AsyncLocalStorage on promise hooks');
  });
});
