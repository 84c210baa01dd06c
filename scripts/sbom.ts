// `npm run sbom -- [--dir <installed tree>] [--output-file <file>]`: the CycloneDX SBOM of what the
// production image ships
// (docs/adr/0046-supply-chain.md): the production workspaces' dependencies, development tools left
// out, written by @cyclonedx/cyclonedx-npm (to standard output unless a file is named). It then
// holds the SBOM to `npm ls --omit=dev`: a package the install holds that the SBOM does not name
// fails the run (exit 1), as `npm sbom --omit=dev` would here (scripts/audit/sbom-coverage.ts).
// The files the build vendors from development dependencies (Redoc's bundle) are added as
// components of their own (scripts/lib/vendored-files.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { missingFromSbom } from './audit/sbom-coverage.ts';
import { VENDORED_FILES, resolveVendored } from './lib/vendored-files.ts';

const root = resolve(import.meta.dirname, '..');
/** The workspaces whose dependencies the image ships; those present in this checkout are described. */
const PRODUCTION_WORKSPACES = ['management-service', 'data-service', 'cli'];

function run(command: string, args: string[], cwd: string): string {
  const done = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (done.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${done.status}): ${done.stderr.trim().split('\n').slice(-3).join(' ')}`);
  return done.stdout;
}

/** A vendored file as a CycloneDX component: its npm package and version, and where it lies in the image. */
function vendoredComponent(vendored: (typeof VENDORED_FILES)[number]) {
  const { version } = resolveVendored(root, vendored);
  const purl = `pkg:npm/${vendored.npmPackage}@${version}`;
  return {
    type: 'library',
    'bom-ref': `vendored:${purl}`,
    name: vendored.npmPackage,
    version,
    purl,
    description: `${vendored.file} of the package (its own dependencies bundled inside), at ${vendored.folder}/dist/${vendored.to}`,
  };
}

function main(): number {
  const { values } = parseArgs({ options: { 'output-file': { type: 'string' }, dir: { type: 'string' } } });
  // The installed tree to describe: this checkout, or the image's production install (Dockerfile).
  const tree = resolve(values.dir ?? root);
  const workspaces = PRODUCTION_WORKSPACES.filter((dir) => existsSync(join(tree, dir, 'package.json'))).flatMap((dir) => [
    '--workspace',
    (JSON.parse(readFileSync(join(tree, dir, 'package.json'), 'utf8')) as { name: string }).name,
  ]);
  const sbomText = run(
    join(root, 'node_modules', '.bin', 'cyclonedx-npm'),
    ['--omit', 'dev', ...workspaces, '--output-format', 'JSON', '--output-reproducible', '--output-file', '-'],
    tree,
  );
  const missing = missingFromSbom(JSON.parse(sbomText), JSON.parse(run('npm', ['ls', '--omit=dev', '--all', '--json', ...workspaces], tree)));
  if (missing.length) {
    console.error(`sbom: ${missing.length} installed production package(s) missing from the SBOM: ${missing.join(', ')}`);
    return 1;
  }
  const sbom = JSON.parse(sbomText) as { components?: unknown[] };
  sbom.components = [...(sbom.components ?? []), ...VENDORED_FILES.map(vendoredComponent)];
  const out = `${JSON.stringify(sbom, null, 2)}\n`;
  if (values['output-file']) writeFileSync(values['output-file'], out);
  else process.stdout.write(out);
  return 0;
}

process.exit(main());
