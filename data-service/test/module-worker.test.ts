import assert from 'node:assert/strict';
import { siblingModule } from '../src/workers/module-worker.ts';

// The worker threads' modules are found beside the pool's own module, with its extension: the
// sources under tsx, the compiled build under `node --conditions=compiled` (docs/adr/0045-compiled-build.md).
describe('siblingModule', () => {
  it('keeps .ts beside a source module', () => {
    assert.equal(
      siblingModule('optimizer-worker', 'file:///app/data-service/src/workers/optimizer-pool.ts').href,
      'file:///app/data-service/src/workers/optimizer-worker.ts',
    );
  });

  it('takes .js beside a compiled module', () => {
    assert.equal(
      siblingModule('simulation-worker', 'file:///app/data-service/dist/workers/simulation-pool.js').href,
      'file:///app/data-service/dist/workers/simulation-worker.js',
    );
  });
});
