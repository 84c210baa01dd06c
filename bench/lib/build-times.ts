// The build's own cost, for bench:startup: `npm run build` from nothing and again with nothing
// changed, and one esbuild bundle of the management service, the alternative weighed in
// docs/adr/0045-compiled-build.md.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type BuildFigures = { cold_s: number; incremental_s: number; dist_files: number; dist_bytes: number };
export type BundleFigures = { build_s: number; bytes: number; source_map_bytes: number };

const seconds = (since: number) => Math.round((performance.now() - since) / 10) / 100;

function timed(command: string, args: string[], cwd: string): number {
  const started = performance.now();
  const run = spawnSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${run.status})`);
  return seconds(started);
}

/** The folders `tsc -b tsconfig.build.json` compiles. */
function compiledPackages(root: string): string[] {
  const solution = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { references: { path: string }[] };
  return solution.references.map((r) => r.path.replace(/^\.\//, '').split('/')[0]!);
}

function folderSize(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files += 1;
    bytes += statSync(join(entry.parentPath, entry.name)).size;
  }
  return { files, bytes };
}

/** Removes every package's dist/ and build info, then builds twice: from nothing, then with nothing changed. */
export function measureBuild(root: string): BuildFigures {
  const packages = compiledPackages(root);
  for (const folder of packages) {
    rmSync(join(root, folder, 'dist'), { recursive: true, force: true });
    rmSync(join(root, folder, 'tsconfig.build.tsbuildinfo'), { force: true });
  }
  const cold = timed('npm', ['run', '-s', 'build'], root);
  const incremental = timed('npm', ['run', '-s', 'build'], root);
  const sizes = packages.map((folder) => folderSize(join(root, folder, 'dist')));
  return {
    cold_s: cold,
    incremental_s: incremental,
    dist_files: sizes.reduce((n, s) => n + s.files, 0),
    dist_bytes: sizes.reduce((n, s) => n + s.bytes, 0),
  };
}

/**
 * One bundle of the management service's entry point with the packages outside it, as esbuild
 * would make it for the image; measured, not used (the ADR says why).
 */
export function measureBundle(root: string): BundleFigures {
  const out = mkdtempSync(join(tmpdir(), 'platform-bundle-'));
  try {
    const outfile = join(out, 'main.js');
    const esbuild = join(root, 'node_modules/.bin/esbuild');
    const args = ['management-service/src/main.ts', '--bundle', '--platform=node', '--format=esm', '--packages=external', '--sourcemap', '--log-level=warning'];
    const build = timed(esbuild, [...args, `--outfile=${outfile}`], root);
    return { build_s: build, bytes: statSync(outfile).size, source_map_bytes: statSync(`${outfile}.map`).size };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
