import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SUPPORTED_NODE_RANGE, isSupportedNode } from '@platform/shared';
import semver from 'semver';
import { readToolchain } from '../image/toolchain.ts';

// One statement of the supported Node.js versions (docs/adr/0056-node-versions.md): the entry
// points' check, every package.json's engines.node, the Node.js that npm ci installs for the npm
// scripts and the image's Node.js must not drift apart.

const root = fileURLToPath(new URL('../../', import.meta.url));
type Manifest = { name: string; engines?: { node?: string }; workspaces?: string[]; optionalDependencies?: Record<string, string> };
type LockEntry = {
  version?: string;
  integrity?: string;
  engines?: { node?: string };
  os?: string[] | string;
  cpu?: string[] | string;
  bin?: Record<string, string>;
};

const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(root, path), 'utf8')) as T;
const rootManifest = readJson<Manifest>('package.json');
const lock = readJson<{ packages: Record<string, LockEntry> }>('package-lock.json');

describe('the Node.js versions the repository states', () => {
  it('every package.json states the range the entry points enforce', () => {
    const folders = ['.', ...(rootManifest.workspaces ?? [])];
    const stated = folders.map((folder) => [folder, readJson<Manifest>(join(folder, 'package.json')).engines?.node]);
    assert.deepEqual(
      stated,
      folders.map((folder) => [folder, SUPPORTED_NODE_RANGE]),
    );
  });

  it('the entry points’ check reads the range as npm does', () => {
    const versions = ['20.20.2', '22.14.0', '22.18.9', '22.19.0', '22.23.3', '23.0.0', '23.11.0', '24.0.0', '25.3.1', '26.12.1'];
    assert.deepEqual(
      versions.map((version) => [version, isSupportedNode(version)]),
      versions.map((version) => [version, semver.satisfies(version, SUPPORTED_NODE_RANGE)]),
    );
  });

  it('npm ci installs the image’s Node.js, pinned to the same version and tarball, for Linux x64 only', () => {
    const toolchain = readToolchain(join(root, 'scripts', 'image', 'toolchain.json'));
    assert.equal(rootManifest.optionalDependencies?.[toolchain.node.package], toolchain.node.version);
    const locked = lock.packages[`node_modules/${toolchain.node.package}`];
    assert.ok(locked, `package-lock.json holds ${toolchain.node.package}`);
    assert.equal(locked.version, toolchain.node.version);
    assert.equal(locked.integrity, toolchain.node.integrity);
    // Its bin named node is what puts the npm scripts on it; elsewhere npm skips it as optional.
    assert.deepEqual(locked.bin, { node: 'bin/node' });
    assert.deepEqual(
      [locked.os, locked.cpu].map((v) => [v].flat()),
      [['linux'], ['x64']],
    );
    assert.ok(isSupportedNode(toolchain.node.version), `${toolchain.node.version} is supported`);
  });

  it('an npm script runs on the pinned Node.js, whatever Node.js runs npm', function () {
    // The optional package is installed on Linux x64 only; elsewhere the machine's Node.js runs the scripts.
    if (process.platform !== 'linux' || process.arch !== 'x64') this.skip();
    this.timeout(60_000);
    const toolchain = readToolchain(join(root, 'scripts', 'image', 'toolchain.json'));
    // npm as a shell finds it: the PATH without this run's node_modules/.bin folders.
    const PATH = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((dir) => !dir.endsWith(join('node_modules', '.bin')))
      .join(delimiter);
    const npm = spawnSync('npm', ['exec', '--offline', '-c', 'node -p process.version'], { cwd: root, encoding: 'utf8', env: { ...process.env, PATH } });
    assert.equal(npm.status, 0, npm.stderr);
    assert.equal(npm.stdout.trim(), `v${toolchain.node.version}`);
  });

  it('the lowest version of each supported line satisfies every locked dependency, so npm ci on it warns of no engine', () => {
    const lowest = SUPPORTED_NODE_RANGE.split('||').map((line) => semver.minVersion(line)!.version);
    assert.deepEqual(lowest, ['22.19.0', '24.0.0']);
    const refusing = Object.entries(lock.packages).flatMap(([path, entry]) => {
      const range = entry.engines?.node;
      return path && range ? lowest.filter((version) => !semver.satisfies(version, range)).map((version) => `${path} (${range}) refuses ${version}`) : [];
    });
    assert.deepEqual(refusing, []);
  });

  it('the range lets in no version below a line that a dependency refuses', () => {
    // The versions just under each line's lowest, and the line between: each is refused both by
    // the range and by at least one dependency, so the range is no narrower than it must be.
    for (const version of ['22.18.0', '23.11.0']) {
      assert.equal(isSupportedNode(version), false, version);
      const needs = Object.entries(lock.packages).filter(([path, entry]) => path && entry.engines?.node && !semver.satisfies(version, entry.engines.node));
      assert.ok(needs.length > 0, `some dependency refuses ${version}, or the range could let it in`);
    }
  });
});
