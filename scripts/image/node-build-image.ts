// The build stage's image: the Debian base with Node.js and npm, both from the verified tarballs.
// Node.js sits at /usr/local/bin/node as in the official node images, so that the Dockerfile's
// stages work on either.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureInstalled } from '@platform/dev-stack/os-packages';
import type { Podman } from '@platform/dev-stack/podman';
import { imageLabel, RECIPE_LABEL } from './podman-images.ts';
import { fetchVerified, type Toolchain } from './toolchain.ts';

export const NODE_BUILD_IMAGE = 'localhost/platform-node-build:22';

/** The build image, made unless one of the same recipe (base image, pins, Containerfile) is present. */
export function ensureNodeBuildImage(
  podman: Podman,
  toolchain: Toolchain,
  baseReference: string,
  containerfile: string,
  log: (line: string) => void,
): { reference: string; built: boolean } {
  const baseId = podman.run(['image', 'inspect', '--format', '{{.Id}}', baseReference]);
  const recipe = createHash('sha256')
    .update(JSON.stringify({ baseId, node: toolchain.node, npm: toolchain.npm, stripped: true }))
    .update(readFileSync(containerfile))
    .digest('hex');
  if (imageLabel(podman, NODE_BUILD_IMAGE, RECIPE_LABEL) === recipe) {
    log(`${NODE_BUILD_IMAGE}: present (Node.js ${toolchain.node.version}, npm ${toolchain.npm.version})`);
    return { reference: NODE_BUILD_IMAGE, built: false };
  }
  const work = mkdtempSync(join(tmpdir(), 'platform-node-'));
  try {
    const downloads = join(work, 'downloads');
    mkdirSync(downloads);
    log(`${NODE_BUILD_IMAGE}: Node.js ${toolchain.node.version} and npm ${toolchain.npm.version} from the npm registry, sha512 verified`);
    const nodeTarball = fetchVerified(toolchain.node, downloads);
    const npmTarball = fetchVerified(toolchain.npm, downloads);
    const context = join(work, 'context');
    mkdirSync(join(context, 'npm'), { recursive: true });
    execFileSync('tar', ['-xzf', nodeTarball, '-C', context, '--strip-components=2', 'package/bin/node']);
    // The published binary carries its debug information: 17 MB of the image that no process reads.
    execFileSync(ensureInstalled('strip', 'binutils', log, 'to strip the node binary'), [join(context, 'node')]);
    execFileSync('tar', ['-xzf', npmTarball, '-C', join(context, 'npm'), '--strip-components=1']);
    copyFileSync(containerfile, join(context, 'Containerfile'));
    podman.run(
      [
        'build',
        '--pull=never',
        '--build-arg',
        `BASE=${baseReference}`,
        '--label',
        `${RECIPE_LABEL}=${recipe}`,
        '-t',
        NODE_BUILD_IMAGE,
        '-f',
        'Containerfile',
        context,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { reference: NODE_BUILD_IMAGE, built: true };
}
