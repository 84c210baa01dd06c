import assert from 'node:assert/strict';
import { installedPackages, missingFromSbom, sbomComponents } from '../audit/sbom-coverage.ts';

// A package as CycloneDX names it (scoped packages: group and name) and as `npm ls --json` does.
const component = (pkg: string, version: string, components: object[] = []) => {
  const slash = pkg.startsWith('@') ? pkg.indexOf('/') : -1;
  const named = slash < 0 ? { name: pkg } : { group: pkg.slice(0, slash), name: pkg.slice(slash + 1) };
  return { type: 'library', ...named, version, purl: `pkg:npm/${pkg.replace('@', '%40')}@${version}`, ...(components.length ? { components } : {}) };
};
const sbom = (...components: object[]) => ({ bomFormat: 'CycloneDX', specVersion: '1.6', components });
type Tree = Record<string, { version: string; resolved?: string; missing?: boolean; dependencies?: Tree }>;
const dep = (version: string, dependencies?: Tree, resolved = `https://registry.npmjs.org/x/-/x-${version}.tgz`) => ({
  version,
  resolved,
  ...(dependencies ? { dependencies } : {}),
});
const ls = (dependencies: Tree) => ({ name: 'investment-platform', version: '0.1.0', dependencies });

const install = ls({
  '@platform/management-service': dep(
    '0.1.0',
    { knex: dep('3.3.0', { pg: dep('8.23.1') }), '@duckdb/node-api': dep('1.4.2') },
    'file:../../management-service',
  ),
  '@platform/data-service': dep('0.1.0', { pg: dep('8.23.1'), ws: dep('8.23.0', { 'safe-buffer': dep('5.2.1') }) }, 'file:../../data-service'),
  'optional-absent': { version: '1.0.0', missing: true },
});

describe('npm run sbom: the SBOM names every installed production package', () => {
  it('reads the installed packages once each, through nested dependencies, leaving out workspace links and missing optionals', () => {
    assert.deepEqual([...installedPackages(install)].sort(), ['@duckdb/node-api@1.4.2', 'knex@3.3.0', 'pg@8.23.1', 'safe-buffer@5.2.1', 'ws@8.23.0']);
  });

  it('reads the components of an SBOM, nested and scoped ones included', () => {
    const document = sbom(component('knex', '3.3.0'), component('ws', '8.23.0', [component('safe-buffer', '5.2.1')]), component('@duckdb/node-api', '1.4.2'));
    assert.deepEqual([...sbomComponents(document)].sort(), ['@duckdb/node-api@1.4.2', 'knex@3.3.0', 'safe-buffer@5.2.1', 'ws@8.23.0']);
  });

  it('names what an SBOM leaves out, by name and version', () => {
    const complete = sbom(
      component('knex', '3.3.0'),
      component('pg', '8.23.1'),
      component('ws', '8.23.0'),
      component('safe-buffer', '5.2.1'),
      component('@duckdb/node-api', '1.4.2'),
    );
    assert.deepEqual(missingFromSbom(complete, install), []);
    // What npm sbom --omit=dev wrote for this repository: the packages the root also lists as devDependencies left out.
    const npmSbom = sbom(component('ws', '8.23.0'), component('safe-buffer', '5.2.1'), component('@duckdb/node-api', '1.4.2'), component('pg', '8.20.0'));
    assert.deepEqual(missingFromSbom(npmSbom, install), ['knex@3.3.0', 'pg@8.23.1']);
  });
});
