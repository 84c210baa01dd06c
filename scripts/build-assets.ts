// The second step of `npm run build`, after `tsc -b`: the files other than TypeScript that sit in
// a compiled package's src/ (the query and search grammars, read at run time from beside their
// parser) are copied to the same place in its dist/, which mirrors src/
// (docs/adr/0045-compiled-build.md). Then the vendored files (scripts/lib/vendored-files.ts).
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { VENDORED_FILES, resolveVendored } from './lib/vendored-files.ts';

/** The packages `tsc -b tsconfig.build.json` compiles, by folder. */
const packages = (JSON.parse(readFileSync('tsconfig.build.json', 'utf8')) as { references: { path: string }[] }).references.map((r) =>
  dirname(r.path).replace(/^\.\//, ''),
);

let copied = 0;
for (const folder of packages) {
  const src = join(folder, 'src');
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith('.ts')) continue;
    const from = join(entry.parentPath, entry.name);
    const to = join(folder, 'dist', relative(src, from));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
    copied += 1;
  }
}
for (const vendored of VENDORED_FILES) {
  const to = join(vendored.folder, 'dist', vendored.to);
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(resolveVendored(process.cwd(), vendored).path, to);
  copied += 1;
}
console.log(`build: ${copied} asset file(s) copied into dist/ of ${packages.join(', ')}`);
