import assert from 'node:assert/strict';
import type { Obj, Resource } from '../k8s/resources.ts';
import { digestProblems, entryPointProblems, isPlatformImage, platformImageProblems } from '../k8s/platform-image.ts';

// The sources of a repository as the check sees them: paths relative to its root.
const repository = (...paths: string[]) => {
  const files = new Set(paths);
  return (path: string) => files.has(path);
};
const sources = repository('management-service/src/main.ts', 'data-service/src/main.ts', 'cli/src/main.ts', 'cli/src/tools/sync.ts');

const DIGEST = `sha256:${'ab12'.repeat(16)}`;

/** A container of the platform's image running `command`; `overrides` change or add fields. */
const container = (command: string[], overrides: Obj = {}): Obj => ({ name: 'app', image: 'localhost/investment-platform:0.1.0', command, ...overrides });

/** A Deployment (or any kind) whose pod runs the given containers and init containers. */
const workload = (containers: Obj[], initContainers: Obj[] = [], kind = 'Deployment'): Resource => ({
  apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1',
  kind,
  metadata: { name: 'w', namespace: 'ns' },
  spec: { template: { spec: { containers, ...(initContainers.length ? { initContainers } : {}) } } },
});

describe('k8s:check: the platform image', () => {
  it('recognises the platform image in any registry, by tag, by digest or bare, and nothing else', () => {
    for (const image of ['investment-platform', 'localhost/investment-platform:0.1.0', `registry.example.com:5000/team/investment-platform@${DIGEST}`])
      assert.equal(isPlatformImage(image), true, image);
    for (const image of ['nats:2.10-alpine', 'postgres:16-bookworm', 'registry.example.com/investment-platform-tools:1', 'investment-platform/x:1', undefined])
      assert.equal(isPlatformImage(image), false, String(image));
  });

  it('accepts node <pkg>/dist/<x>.js of a compiled package whose source exists, options after it included', () => {
    assert.deepEqual(entryPointProblems(container(['node', 'management-service/dist/main.js']), sources), []);
    assert.deepEqual(entryPointProblems(container(['node', 'cli/dist/main.js', 'bus-credentials', 'sync'], { args: ['--once'] }), sources), []);
    assert.deepEqual(entryPointProblems(container(['node', 'cli/dist/tools/sync.js']), sources), []);
  });

  it('refuses an entry point whose TypeScript source does not exist, naming the source it looked for', () => {
    const problems = entryPointProblems(container(['node', 'data-service/dist/server.js']), sources);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /container app: runs data-service\/dist\/server\.js, but data-service\/src\/server\.ts does not exist/);
    // The same command passes once the source is there: the answer comes from the repository.
    assert.deepEqual(entryPointProblems(container(['node', 'data-service/dist/server.js']), repository('data-service/src/server.ts')), []);
  });

  it('refuses TypeScript loaders and TypeScript sources, wherever in the command or args they appear', () => {
    const cases: [argv: string[], args: string[], expected: RegExp][] = [
      [['node', '--import', 'tsx', 'management-service/src/main.ts'], [], /TypeScript loader \(--import\)/],
      [['node', '--import=tsx', 'management-service/dist/main.js'], [], /TypeScript loader \(--import=tsx\)/],
      [['node', '--loader', 'ts-node/esm', 'cli/dist/main.js'], [], /TypeScript loader \(--loader\)/],
      [['npx', 'tsx', 'scripts/cli.ts'], [], /TypeScript loader \(tsx\)/],
      [['node', 'cli/dist/main.js'], ['--require', 'node_modules/tsx/dist/cjs.js'], /TypeScript loader/],
      [['node', 'scripts/cli.ts', 'migrate'], [], /not an entry point <pkg>\/dist\/<x>\.js/],
      [['node', 'management-service/src/main.ts'], [], /not an entry point/],
      [['node', 'bench/dist/load.js'], [], /not an entry point/],
      [['node', 'cli/dist/../../etc/x.js'], [], /not an entry point/],
      [['node', '--enable-source-maps', 'cli/dist/main.js'], [], /runs node --enable-source-maps, not an entry point/],
      [['sh', '-c', 'node cli/dist/main.js migrate'], [], /runs sh, not node <pkg>\/dist\/<x>\.js/],
      [[], [], /names no command/],
    ];
    for (const [argv, args, expected] of cases) {
      const problems = entryPointProblems(container(argv, { args }), sources);
      assert.ok(
        problems.some((p) => expected.test(p)),
        `${[...argv, ...args].join(' ')}: ${problems.join('; ')}`,
      );
    }
  });

  it('requires a digest of sha256 and 64 hex digits, not a tag or a short or upper-case digest', () => {
    assert.deepEqual(digestProblems(container([], { image: `registry.example.com/investment-platform@${DIGEST}` })), []);
    for (const image of [
      'registry.example.com/investment-platform:0.1.0',
      'registry.example.com/investment-platform',
      `registry.example.com/investment-platform@sha256:${'ab12'.repeat(15)}`,
      `registry.example.com/investment-platform@sha256:${'AB12'.repeat(16)}`,
      `registry.example.com/investment-platform@sha512:${'ab12'.repeat(32)}`,
    ]) {
      const problems = digestProblems(container([], { image }));
      assert.equal(problems.length, 1, image);
      assert.ok(problems[0]!.includes(image), problems[0]);
    }
  });

  it('checks every platform container and init container of the objects, and the digest in production only', () => {
    const objects = [
      workload([container(['node', 'management-service/dist/main.js'], { name: 'api' })], [container(['node', 'scripts/cli.ts'], { name: 'setup' })]),
      // Not the platform's image: its command is its own.
      workload([{ name: 'nats', image: 'nats:2.10-alpine', command: ['nats-server'] }], [], 'StatefulSet'),
      workload([container(['node', 'cli/dist/main.js', 'migrate'], { name: 'migrate' })], [], 'Job'),
    ];
    const dev = platformImageProblems('k8s/overlays/dev', objects, sources, false);
    assert.deepEqual(dev.length, 1, dev.join('\n'));
    assert.match(dev[0]!, /^k8s\/overlays\/dev: Deployment ns\/w: container setup: runs node scripts\/cli\.ts/);
    const production = platformImageProblems('k8s/overlays/production', objects, sources, true);
    // The three platform containers carry a tag, not a digest.
    assert.equal(production.filter((p) => p.includes('is not pinned by digest')).length, 3, production.join('\n'));
    const pinned = objects.map(
      (o) => JSON.parse(JSON.stringify(o).replaceAll('localhost/investment-platform:0.1.0', `r.example/investment-platform@${DIGEST}`)) as Resource,
    );
    assert.deepEqual(
      platformImageProblems('k8s/overlays/production', pinned, sources, true).filter((p) => p.includes('digest')),
      [],
    );
  });
});
