// What a build leaves beside the repository (.image/, git-ignored): the image's SBOM copied out of
// it and image.json, the facts of the build for whoever deploys or tests it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Podman } from '@platform/dev-stack/podman';

export type ImageRecord = {
  reference: string;
  references: string[];
  id: string;
  digest: string;
  size_mb: number;
  node: string;
  version: string;
  revision: string;
  build_seconds: number;
  built_at: string;
};

/** Copies /app/sbom.cdx.json out of the image through a container that is created, never started. */
export function copySbom(podman: Podman, reference: string, to: string): void {
  const container = podman.run(['create', reference]);
  try {
    podman.run(['cp', `${container}:/app/sbom.cdx.json`, to]);
  } finally {
    podman.run(['rm', container]);
  }
}

export function inspectImage(podman: Podman, reference: string): { id: string; digest: string; sizeMb: number } {
  const [id, digest, size] = podman.run(['image', 'inspect', '--format', '{{.Id}} {{.Digest}} {{.Size}}', reference]).split(' ') as [string, string, string];
  return { id, digest, sizeMb: Math.round(Number(size) / 1e5) / 10 };
}

export function writeRecord(dir: string, record: ImageRecord): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'image.json');
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  return file;
}
