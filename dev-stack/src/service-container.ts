// A service run as a container of the platform's image, as production runs it: the launcher that
// startServiceProcess is given instead of `node --import tsx` (docs/adr/0048-image-test.md). The
// child process is an attached `podman run`, which relays SIGTERM to the container's init and
// exits with the service's exit code; the container is removed when it ends, and at once when
// this process exits.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { newUlid } from '@platform/shared';
import type { Podman } from './podman.ts';
import type { ServiceLauncher, ServiceName, ServiceSpec } from './service-process.ts';

/** The image's user (docs/adr/0047-container-image.md): not root, and owner of nothing in the image. */
export const IMAGE_USER = '65532:65532';

export type Volume = { host: string; container: string; writable?: boolean };

export type ContainerOptions = {
  podman: Pick<Podman, 'env'>;
  image: string;
  /** What the container runs for a service; by default its compiled entry point, `node <service>-service/dist/main.js`. */
  command?: (spec: ServiceSpec) => string[];
  /** Host folders the service reads (read-only) or writes (`writable`); nothing else of the host is visible. */
  volumes?: (spec: ServiceSpec) => Volume[];
  /** Further `podman run` options placed before the image (a stand-in image's bind mounts). */
  runOptions?: string[];
};

const folders: Record<ServiceName, string> = { management: 'management-service', data: 'data-service' };

export const compiledEntry = (spec: ServiceSpec): string[] => ['node', ...(spec.nodeArgs ?? []), `${folders[spec.service]}/dist/main.js`];

/** The options that confine every container of the platform: loopback of the host, read-only root, no capabilities, not root. */
export function confinement(): string[] {
  return [
    '--init',
    '--network=host',
    '--read-only',
    '--tmpfs=/tmp:rw,nosuid,nodev,size=256m',
    `--user=${IMAGE_USER}`,
    '--cap-drop=all',
    '--security-opt=no-new-privileges',
    '--pull=never',
  ];
}

export type ContainerRun = {
  name: string;
  /** The container's whole environment (besides what the image sets). */
  env: Record<string, string>;
  command: string[];
  volumes?: Volume[];
};

/**
 * `podman run` of one container: `--rm`, its name, the confinement above, and the variables
 * named with `-e NAME` only, their values handed to podman's own environment so that none (the
 * signing key, the database password) shows in a process list; the host's other variables stay out.
 */
export function containerRun(
  options: Pick<ContainerOptions, 'podman' | 'image' | 'runOptions'>,
  run: ContainerRun,
): { args: string[]; env: NodeJS.ProcessEnv } {
  const args = [
    'run',
    '--rm',
    `--name=${run.name}`,
    ...confinement(),
    ...(run.volumes ?? []).map((v) => `--volume=${v.host}:${v.container}:${v.writable ? 'rw' : 'ro'}`),
    ...Object.keys(run.env).flatMap((key) => ['-e', key]),
    ...(options.runOptions ?? []),
    options.image,
    ...run.command,
  ];
  return { args, env: { ...options.podman.env, ...run.env } };
}

const sourceRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A bare base image standing in for the platform's image: this repository mounted read-only at
 * /app and this machine's node running the sources through tsx. For working on what runs the
 * image before one is built; what is checked of the image itself does not hold there.
 */
export const sourcesInBaseImage: Pick<ContainerOptions, 'command' | 'runOptions'> = {
  command: (spec) => ['node', ...(spec.nodeArgs ?? []), '--import', 'tsx', `${folders[spec.service]}/src/main.ts`],
  runOptions: [`--volume=${process.execPath}:/usr/local/bin/node:ro`, `--volume=${sourceRoot}:/app:ro`, '--workdir=/app', '-e', 'HOME=/tmp'],
};

/** Removes the container at once (killed first); nothing to do when it is already gone. */
export function removeContainer(podman: Pick<Podman, 'env'>, name: string): void {
  try {
    execFileSync('podman', ['rm', '--force', '--time=0', '--ignore', name], { env: podman.env, stdio: 'ignore', timeout: 20_000 });
  } catch {
    // Already gone, or podman itself failed: the caller is ending and has no one left to tell.
  }
}

export function containerLauncher(options: ContainerOptions): ServiceLauncher {
  return (spec) => {
    // A new name at each start: the previous container may still be being removed.
    const name = `platform-${spec.name}-${newUlid().toLowerCase()}`;
    const { args, env } = containerRun(options, {
      name,
      env: { HOST: '127.0.0.1', PORT: String(spec.port), ...spec.env },
      command: (options.command ?? compiledEntry)(spec),
      volumes: options.volumes?.(spec),
    });
    return {
      command: 'podman',
      args,
      env,
      kill: () => {
        try {
          execFileSync('podman', ['kill', '--signal=KILL', name], { env: options.podman.env, stdio: 'ignore', timeout: 20_000 });
        } catch {
          // It had already ended.
        }
      },
      leave: () => removeContainer(options.podman, name),
      container: name,
    };
  };
}
