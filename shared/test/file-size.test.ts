import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// docs/adr/0041-one-job-per-file.md: no source file over 400 lines except generated ones.
const root = fileURLToPath(new URL('../../', import.meta.url));
const LIMIT = 400;
const SKIPPED = new Set(['node_modules', '.git', 'dist', '.data', 'generated']);
/** Files over the limit still to be split, by their path; each leaves the list when it is. */
const NOT_YET_SPLIT = new Set(['bench/data.ts', 'bench/query-language.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(ts|js|mjs|cjs)$/.test(entry.name) ? [relative(root, path)] : [];
  });
}

const lines = (file: string) => readFileSync(join(root, file), 'utf8').split('\n').length - 1;

describe('file size', () => {
  it(`keeps every source file that is not generated within ${LIMIT} lines`, () => {
    const files = sources(root);
    assert.ok(files.includes('shared/src/config.ts'), 'the walk finds the sources');
    const over = files.filter((file) => !NOT_YET_SPLIT.has(file) && lines(file) > LIMIT).map((file) => `${file}: ${lines(file)} lines`);
    assert.deepEqual(over, [], 'split these by job');
  });

  it('lists only files that are still over the limit as not yet split', () => {
    const files = new Set(sources(root));
    const done = [...NOT_YET_SPLIT].filter((file) => !files.has(file) || lines(file) <= LIMIT);
    assert.deepEqual(done, [], 'remove these from NOT_YET_SPLIT');
  });
});
