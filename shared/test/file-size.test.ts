import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// docs/adr/0043-one-job-per-file.md: no source file over 400 lines except generated ones.
const root = fileURLToPath(new URL('../../', import.meta.url));
const LIMIT = 400;
/** Folders that hold no source of ours, and the generated types (`npm run generate`). */
const SKIPPED = new Set(['node_modules', '.git', 'dist', '.data', 'api-types']);

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
    const over = files.filter((file) => lines(file) > LIMIT).map((file) => `${file}: ${lines(file)} lines`);
    assert.deepEqual(over, [], 'split these by job');
  });
});
