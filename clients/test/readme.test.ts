import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';

const root = new URL('../../', import.meta.url);

describe('clients/README.md', () => {
  it('shows clients/examples/quick-start.ts verbatim (a test runs that file against npm start)', async () => {
    const readme = await readFile(new URL('clients/README.md', root), 'utf8');
    const example = await readFile(new URL('clients/examples/quick-start.ts', root), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Quick start\n'));
    const block = /^```ts\n([\s\S]*?)^```$/m.exec(section);
    assert.ok(block, 'the Quick start section has a ts block');
    assert.equal(block[1], example, 'copy clients/examples/quick-start.ts into the README again');
  });
});
