import assert from 'node:assert/strict';
import { compiledEntry, containerLauncher, containerRun } from '@platform/dev-stack/service-container';
import type { ServiceSpec } from '@platform/dev-stack/service-process';

// The `podman run` a service's container is started with (docs/adr/0048-image-test.md): built
// here without podman; the image test runs it.

const podman = { env: { PATH: '/usr/bin', CONTAINERS_CONF: '/tmp/containers.conf', HOST_ONLY_SECRET: 'host' } };
const spec: ServiceSpec = {
  name: 'data',
  service: 'data',
  port: 4100,
  env: { DATABASE_URL: 'postgres://platform:s3cret@127.0.0.1:5432/platform', DUCKDB_PATH: '/work/duck/data.duckdb' },
};

/** The values of every `--flag=value` and `-e NAME` of the arguments before the image. */
function parse(args: string[], image: string) {
  const at = args.indexOf(image);
  assert.ok(at > 0, 'the image is named');
  const options = args.slice(1, at);
  const names: string[] = [];
  for (let i = 0; i < options.length; i++) if (options[i] === '-e') names.push(options[++i]!);
  return { options, names, command: args.slice(at + 1) };
}

describe('a service as a container of the image (podman run)', () => {
  it('confines it: removed at exit, init, host loopback, read-only root with a /tmp tmpfs, user 65532, no capabilities, no new privileges, no pull', () => {
    const { args } = containerRun({ podman, image: 'localhost/investment-platform:0.1.0' }, { name: 'platform-data-x', env: {}, command: ['node', 'x.js'] });
    assert.equal(args[0], 'run');
    const { options } = parse(args, 'localhost/investment-platform:0.1.0');
    for (const option of [
      '--rm',
      '--name=platform-data-x',
      '--init',
      '--network=host',
      '--read-only',
      '--user=65532:65532',
      '--cap-drop=all',
      '--security-opt=no-new-privileges',
      '--pull=never',
    ])
      assert.ok(options.includes(option), option);
    assert.ok(
      options.some((o) => o.startsWith('--tmpfs=/tmp:')),
      'a tmpfs on /tmp',
    );
    assert.ok(!options.includes('--privileged'));
  });

  it('names each variable with -e NAME only: the values are in podman’s environment, not on its command line, and the host’s other variables stay out', () => {
    const launch = containerLauncher({ podman, image: 'img' })(spec);
    const { names, options } = parse(launch.args, 'img');
    assert.deepEqual(names.sort(), ['DATABASE_URL', 'DUCKDB_PATH', 'HOST', 'PORT']);
    assert.ok(!launch.args.some((a) => a.includes('s3cret')), 'no secret on the command line');
    assert.ok(!options.some((o) => o.includes('HOST_ONLY_SECRET')), 'the host’s own variables are not passed');
    assert.equal(launch.env.DATABASE_URL, spec.env.DATABASE_URL);
    assert.equal(launch.env.HOST, '127.0.0.1');
    assert.equal(launch.env.PORT, '4100');
    assert.equal(launch.env.CONTAINERS_CONF, '/tmp/containers.conf', 'podman itself runs with the project’s configuration');
    assert.equal(launch.command, 'podman');
  });

  it('runs the compiled entry point by default, mounts only the volumes asked for, read-only unless writable', () => {
    const launch = containerLauncher({
      podman,
      image: 'img',
      volumes: () => [
        { host: '/work/duck', container: '/work/duck', writable: true },
        { host: '/work/reference', container: '/work/reference' },
      ],
    })(spec);
    const { options, command } = parse(launch.args, 'img');
    assert.deepEqual(command, ['node', 'data-service/dist/main.js']);
    assert.deepEqual(compiledEntry({ ...spec, service: 'management', nodeArgs: ['--max-old-space-size=256'] }), [
      'node',
      '--max-old-space-size=256',
      'management-service/dist/main.js',
    ]);
    assert.deepEqual(
      options.filter((o) => o.startsWith('--volume=')),
      ['--volume=/work/duck:/work/duck:rw', '--volume=/work/reference:/work/reference:ro'],
    );
  });

  it('names each start’s container anew, so that a restart does not wait for the previous one’s removal', () => {
    const launcher = containerLauncher({ podman, image: 'img' });
    const first = launcher(spec).container!;
    const second = launcher(spec).container!;
    assert.match(first, /^platform-data-[0-9a-z]{26}$/);
    assert.notEqual(first, second);
  });
});
