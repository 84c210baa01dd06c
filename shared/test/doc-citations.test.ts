import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const root = new URL('../../', import.meta.url);

/**
 * Citations of design documents that live outside the repository: a reader who has only the
 * repository cannot follow them. The rules and their reasons are in docs/adr/ and
 * docs/architecture.md; cite those instead. Written in pieces so this file does not cite them.
 */
const OUTSIDE = ['decisions ' + '§', 'DESIGN' + '.md', 'service-' + 'interface.md'];
const CHECKED = /\.(ts|sql|peggy|ya?ml|md)$/;

async function trackedFiles(): Promise<string[]> {
  const { stdout } = await promisify(execFile)('git', ['ls-files', '-z'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  return stdout.split('\0').filter((path) => CHECKED.test(path));
}

/** `path:line: text` of every line that cites a document outside the repository. */
async function outsideCitations(base: URL, paths: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(new URL(path, base), 'utf8');
    } catch (error) {
      // Tracked but moved or deleted in the working tree (not yet committed): nothing to read.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    text.split('\n').forEach((line, i) => {
      if (OUTSIDE.some((needle) => line.includes(needle))) found.push(`${path}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe('citations stay inside the repository', function () {
  this.timeout(60_000);

  it('no tracked source, SQL, grammar, YAML or Markdown file cites a design document outside the repository', async () => {
    const paths = await trackedFiles();
    assert.ok(
      paths.some((path) => path.startsWith('docs/adr/')),
      'git ls-files lists the decision records (is this a git checkout?)',
    );
    const found = await outsideCitations(root, paths);
    assert.deepEqual(found, [], `cite docs/adr/NNNN-*.md or docs/architecture.md instead:\n${found.join('\n')}`);
  });

  it('reports each citing line as path:line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'citations-'));
    try {
      await writeFile(join(dir, 'a.ts'), `// fine\n// see ${OUTSIDE[0]}4\n`);
      await writeFile(join(dir, 'b.md'), `[x](../shared/${OUTSIDE[1]})\n`);
      await writeFile(join(dir, 'c.sql'), '-- see docs/adr/0004-errors.md\n');
      const found = await outsideCitations(pathToFileURL(dir + '/'), ['a.ts', 'b.md', 'c.sql', 'moved.ts']);
      assert.deepEqual(
        found.map((entry) => entry.split(': ')[0]),
        ['a.ts:2', 'b.md:1'],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
