// `npm run sbom -- [--output-file <file>]`: the CycloneDX SBOM of what the production image ships
// (docs/adr/0046-supply-chain.md): the production workspaces' dependencies, development tools left
// out, written by @cyclonedx/cyclonedx-npm (to standard output unless a file is named). It then
// holds the SBOM to `npm ls --omit=dev`: a package the install holds that the SBOM does not name
// fails the run (exit 1), as `npm sbom --omit=dev` would here (scripts/audit/sbom-coverage.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { missingFromSbom } from './audit/sbom-coverage.ts';

const root = resolve(import.meta.dirname, '..');
/** The workspaces whose dependencies the image ships; those present in this checkout are described. */
const PRODUCTION_WORKSPACES = ['management-service', 'data-service', 'cli'];

function run(command: string, args: string[]): string {
  const done = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (done.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${done.status}): ${done.stderr.trim().split('\n').slice(-3).join(' ')}`);
  return done.stdout;
}

function main(): number {
  const { values } = parseArgs({ options: { 'output-file': { type: 'string' } } });
  const workspaces = PRODUCTION_WORKSPACES.filter((dir) => existsSync(join(root, dir, 'package.json'))).flatMap((dir) => [
    '--workspace',
    (JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as { name: string }).name,
  ]);
  const sbomText = run(join(root, 'node_modules', '.bin', 'cyclonedx-npm'), [
    '--omit',
    'dev',
    ...workspaces,
    '--output-format',
    'JSON',
    '--output-reproducible',
    '--output-file',
    '-',
  ]);
  const missing = missingFromSbom(JSON.parse(sbomText), JSON.parse(run('npm', ['ls', '--omit=dev', '--all', '--json', ...workspaces])));
  if (missing.length) {
    console.error(`sbom: ${missing.length} installed production package(s) missing from the SBOM: ${missing.join(', ')}`);
    return 1;
  }
  if (values['output-file']) writeFileSync(values['output-file'], sbomText);
  else process.stdout.write(sbomText);
  return 0;
}

process.exit(main());
