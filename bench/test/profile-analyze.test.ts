import assert from 'node:assert/strict';
import { moduleOf, summarize, type CpuProfile } from '../profile/analyze.ts';

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 9 });

describe('a CPU profile as text (bench/profile.ts)', () => {
  it('names where code lives: a package, a folder of the repository, a Node.js module', () => {
    assert.equal(moduleOf('file:///r/node_modules/knex/lib/query.js'), 'knex');
    assert.equal(moduleOf('file:///r/node_modules/@opentelemetry/api/build/x.js'), '@opentelemetry/api');
    assert.equal(moduleOf('file:///r/shared/src/http/app.ts'), 'shared/src/http');
    assert.equal(moduleOf('node:internal/streams/writable'), 'node:internal/streams/writable');
    assert.equal(moduleOf(''), '(native)');
  });

  it('shares self time by frame and the stack by module, of the samples not idle', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)'), children: [2, 3, 5] },
        { id: 2, callFrame: frame('handle', 'file:///r/shared/src/http/app.ts'), children: [4] },
        { id: 3, callFrame: frame('(idle)') },
        { id: 4, callFrame: frame('toSQL', 'file:///r/node_modules/knex/lib/q.js') },
        { id: 5, callFrame: frame('(garbage collector)') },
      ],
      samples: [4, 4, 2, 5, 3, 3, 3, 3],
    };
    const s = summarize(profile);
    assert.equal(s.samples, 8);
    assert.equal(s.busy, 4);
    assert.deepEqual(s.self, [
      { name: 'toSQL knex', share: 0.5 },
      { name: 'handle shared/src/http/app.ts', share: 0.25 },
      { name: '(garbage collector) (native)', share: 0.25 },
    ]);
    assert.deepEqual(s.onStack, [
      { name: 'shared/src/http', share: 0.75 },
      { name: 'knex', share: 0.5 },
      { name: '(native)', share: 0.25 },
    ]);
    assert.deepEqual(s.files, [{ name: 'shared/src/http/app.ts', share: 0.75 }]);
  });
});
