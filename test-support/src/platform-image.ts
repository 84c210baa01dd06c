// The test platform's services as containers of the platform's image instead of in this process,
// when PLATFORM_IMAGE names one (`npm run image:test` sets it; docs/adr/0048-image-test.md): the
// same journeys, run against what production runs.
import { chmodSync, chownSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensurePodman, type Podman } from '@platform/dev-stack/podman';
import { containerLauncher, sourcesInBaseImage, type Volume } from '@platform/dev-stack/service-container';
import type { ServiceLauncher, ServiceSpec } from '@platform/dev-stack/service-process';

export type PlatformImage = {
  /** The image's reference, e.g. localhost/investment-platform:0.1.0. */
  image: string;
  /**
   * A bare base image standing in for the platform's image (PLATFORM_IMAGE_STAND_IN=1): the
   * repository bind-mounted read-only at /app and this machine's node run the sources through tsx.
   * For working on the launcher without a built image; the image's own checks do not hold there.
   */
  standIn: boolean;
};

/** The image the services run from, or none: they run in this process. */
export function platformImage(): PlatformImage | undefined {
  const image = process.env.PLATFORM_IMAGE;
  return image ? { image, standIn: process.env.PLATFORM_IMAGE_STAND_IN === '1' } : undefined;
}

// The image's user (65532) owns nothing on this machine: a folder it must write is handed to it.
const IMAGE_UID = 65532;

/** Makes `dir` (and its parents) a folder the image's user may write. */
export function writableByImage(dir: string): string {
  mkdirSync(dir, { recursive: true });
  try {
    chownSync(dir, IMAGE_UID, IMAGE_UID);
  } catch {
    // Not root: anyone may write it instead.
    chmodSync(dir, 0o777);
  }
  return dir;
}

/**
 * What the services read and write on this machine, mounted at the same paths: the data service's
 * DuckDB folder writable, its reference files read-only; nothing else of the host.
 */
function volumes(spec: ServiceSpec): Volume[] {
  if (spec.service !== 'data') return [];
  const mounts: Volume[] = [];
  if (spec.env.DUCKDB_PATH) mounts.push({ host: dirname(spec.env.DUCKDB_PATH), container: dirname(spec.env.DUCKDB_PATH), writable: true });
  if (spec.env.REFERENCE_DIR) mounts.push({ host: spec.env.REFERENCE_DIR, container: spec.env.REFERENCE_DIR });
  return mounts;
}

let podman: Podman | undefined;

/** podman with the project's configuration, once per process. */
export function testPodman(): Podman {
  return (podman ??= ensurePodman(() => undefined));
}

export function imageLauncher(choice: PlatformImage): ServiceLauncher {
  return containerLauncher({ podman: testPodman(), image: choice.image, volumes, ...(choice.standIn ? sourcesInBaseImage : {}) });
}
