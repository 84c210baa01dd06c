import assert from 'node:assert/strict';
import { markerProblems, missingExpects, shellBlocksOf } from '../src/doc-blocks.ts';

const page = [
  '# A page',
  '```json',
  '{"a": 1}',
  '```',
  '```sh',
  'echo one',
  '# expect: one',
  '```',
  '<!-- not run: runs until Ctrl-C -->',
  '```bash',
  'tail -f x',
  '```',
  '- a list',
  '  ```console',
  '  echo indented',
  '  ```',
  '```python',
  'print(1)',
  '```',
].join('\n');

describe('shell blocks of a Markdown page (e2e/src/doc-blocks.ts)', () => {
  it('finds the sh, bash and console blocks in order with their line, reason and expected texts, and skips other languages', () => {
    const blocks = shellBlocksOf('p.md', page);
    assert.deepEqual(
      blocks.map(({ line, script, notRun, expects }) => ({ line, script, notRun, expects })),
      [
        { line: 5, script: 'echo one\n# expect: one', notRun: null, expects: ['one'] },
        { line: 10, script: 'tail -f x', notRun: 'runs until Ctrl-C', expects: [] },
        { line: 14, script: 'echo indented', notRun: null, expects: [] },
      ],
    );
  });

  it('does not read a fence inside a block of another language as a shell block', () => {
    assert.deepEqual(shellBlocksOf('p.md', '````md\n```sh\necho no\n```\n````\n'), []);
  });

  it('refuses a fence that is never closed, naming its line', () => {
    assert.throws(() => shellBlocksOf('p.md', 'text\n```sh\necho x\n'), /p\.md:2: a fence that is never closed/);
  });

  it('reports a "not run" without a reason and an expectation of a block that does not run', () => {
    const blocks = shellBlocksOf('p.md', '<!-- not run: -->\n```sh\necho a\n```\n<!--not run: no server -->\n```sh\nx\n# expect: y\n```\n');
    assert.deepEqual(markerProblems(blocks), ['p.md:2: "not run" without a reason', 'p.md:6: "# expect:" in a block that is not run']);
    assert.deepEqual(markerProblems(shellBlocksOf('p.md', page)), []);
  });

  it('finds an expected text in some line of the output, and names the ones missing', () => {
    const [block] = shellBlocksOf('p.md', '```sh\nx\n# expect: "status":"SETTLED"\n# expect: portfolios.creation\n```\n');
    assert.deepEqual(missingExpects(block!, '{"id":"T1","status":"SETTLED"}\nportfolios.creation\n'), []);
    assert.deepEqual(missingExpects(block!, '{"status":"PENDING"}\n'), ['"status":"SETTLED"', 'portfolios.creation']);
  });
});
