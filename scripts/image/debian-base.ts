// The runtime base: a minimal Debian made here by mmdebstrap from the machine's own Debian mirror and
// imported into podman, so that no image registry is needed (docs/adr/0047-container-image.md).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Podman } from '@platform/dev-stack/podman';
import { imageLabel, RECIPE_LABEL } from './podman-images.ts';

export const BASE_IMAGE = 'localhost/platform-debian:bookworm';
/** The same base with binutils, under the build stage: `strip` for DuckDB's native library. */
export const BUILD_BASE_IMAGE = 'localhost/platform-debian-build:bookworm';
const FALLBACK_MIRROR = 'http://deb.debian.org/debian';

// Files no process in the image reads: documentation, manuals, translations. iconv's converters go
// too: Node.js converts text with ICU.
const PATH_EXCLUDES = [
  '/usr/share/doc/*',
  '/usr/share/man/*',
  '/usr/share/info/*',
  '/usr/share/locale/*',
  '/usr/share/lintian/*',
  '/usr/lib/x86_64-linux-gnu/gconv/*',
];

// Essential packages that only a system someone logs into or administers uses: once ca-certificates
// is configured (its debconf and Perl included), nothing in the image runs them; /bin/sh stays
// (dash). 18 MB of the base.
const PURGE = ['bash', 'perl-base', 'debconf', 'util-linux', 'login', 'libdb5.3', 'sysvinit-utils'];

export type DebianRecipe = { suite: string; include: string[] };

/** The Debian mirror of this machine's apt sources (one-line or deb822 form), else deb.debian.org. */
export function debianMirror(sourcesDir = '/etc/apt/sources.list.d', sourcesList = '/etc/apt/sources.list'): string {
  const files = [sourcesList, ...(existsSync(sourcesDir) ? readdirSync(sourcesDir).map((name) => join(sourcesDir, name)) : [])];
  for (const file of files.filter((f) => existsSync(f))) {
    const text = readFileSync(file, 'utf8');
    const found = /^\s*URIs:\s*(\S+\/debian)\/?\s*$/m.exec(text)?.[1] ?? /^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s+/m.exec(text)?.[1];
    if (found) return found;
  }
  return FALLBACK_MIRROR;
}

/** mmdebstrap's arguments: the essential packages (no apt) plus the libraries Node.js and DuckDB load, less PURGE. */
export function mmdebstrapArguments(recipe: DebianRecipe, mirror: string, output: string): string[] {
  return [
    '--quiet',
    '--variant=essential',
    // Merged /usr by the hook rather than the usrmerge package, which would bring Perl along.
    '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
    `--include=${recipe.include.join(',')}`,
    ...PATH_EXCLUDES.map((path) => `--dpkgopt=path-exclude=${path}`),
    '--dpkgopt=path-include=/usr/share/doc/*/copyright',
    `--customize-hook=chroot "$1" dpkg --purge --force-remove-essential --force-depends ${PURGE.join(' ')}`,
    '--customize-hook=rm -rf "$1"/var/cache/* "$1"/var/lib/apt/lists/* "$1"/var/log/*',
    recipe.suite,
    output,
    mirror,
  ];
}

/** The base image `reference`, built unless one of the same recipe (arguments and mirror) is present. */
export function ensureBaseImage(
  podman: Podman,
  recipe: DebianRecipe,
  log: (line: string) => void,
  reference = BASE_IMAGE,
): { reference: string; built: boolean } {
  const mirror = debianMirror();
  const recipeHash = createHash('sha256')
    .update(JSON.stringify(mmdebstrapArguments(recipe, mirror, '-')))
    .digest('hex');
  if (imageLabel(podman, reference, RECIPE_LABEL) === recipeHash) {
    log(`${reference}: present (recipe ${recipeHash.slice(0, 12)})`);
    return { reference: reference, built: false };
  }
  log(`${reference}: mmdebstrap ${recipe.suite} from ${mirror}`);
  const work = mkdtempSync(join(tmpdir(), 'platform-debian-'));
  try {
    const tarball = join(work, 'rootfs.tar');
    execFileSync('mmdebstrap', mmdebstrapArguments(recipe, mirror, tarball), { stdio: ['ignore', 'inherit', 'inherit'] });
    podman.run(['import', '--change', `LABEL ${RECIPE_LABEL}=${recipeHash}`, '--change', 'CMD ["/bin/sh"]', tarball, reference]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { reference, built: true };
}
