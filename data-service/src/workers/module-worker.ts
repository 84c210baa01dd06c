import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * tsx's ESM module API (`tsx/esm/api` under the `import` condition), found from here: a worker's
 * bare import would resolve from the working directory, and require.resolve finds the CommonJS one.
 */
function tsxApi(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('tsx/package.json');
  const exports = (require(manifest) as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(join(dirname(manifest), exports['./esm/api']!.import.default)).href;
}

/**
 * The module `name` beside the module at `base` (its import.meta.url), with that module's own
 * extension: `.ts` when the service runs its sources, `.js` when it runs the compiled build
 * (docs/adr/0045-compiled-build.md). A literal `./name.ts` would not exist in `dist/`.
 */
export const siblingModule = (name: string, base: string): URL => new URL(`./${name}${extname(new URL(base).pathname)}`, base);

/**
 * A worker thread running the module at `url`. Run from its sources, the service loads TypeScript
 * through tsx, whose loader a worker does not inherit: for a .ts module the worker registers it
 * before importing. The compiled build's .js modules are imported as they are.
 */
export function moduleWorker(url: URL, workerData?: unknown): Worker {
  const source = url.pathname.endsWith('.ts')
    ? `import(${JSON.stringify(tsxApi())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`
    : `import(${JSON.stringify(url.href)})`;
  return new Worker(source, { eval: true, workerData });
}
