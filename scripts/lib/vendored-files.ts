// Files of a development dependency that the build copies into a compiled package's dist/, so that
// production ships the one file it serves and none of the package's own dependencies: Redoc's
// standalone bundle (the API reference pages) holds React, MobX and the rest inside it, which as
// installed packages were a sixth of the image (docs/adr/0047-container-image.md). The SBOM names
// each of them as a component of its own (scripts/sbom.ts).
import { createRequire } from 'node:module';
import { join } from 'node:path';

export type VendoredFile = {
  /** The compiled package that serves it, by folder. */
  folder: string;
  /** The npm package it comes from, a devDependency of that package. */
  npmPackage: string;
  /** The file inside the npm package. */
  file: string;
  /** Where it goes, relative to the package's dist/ (the module that reads it looks there). */
  to: string;
};

export const VENDORED_FILES: readonly VendoredFile[] = [
  { folder: 'management-service', npmPackage: 'redoc', file: 'bundles/redoc.standalone.js', to: 'http/redoc.standalone.js' },
];

/** The installed file and its package's version, resolved from the package that declares it. */
export function resolveVendored(root: string, vendored: VendoredFile): { path: string; version: string } {
  const require = createRequire(join(root, vendored.folder, 'package.json'));
  const manifest = require(`${vendored.npmPackage}/package.json`) as { version: string };
  return { path: require.resolve(`${vendored.npmPackage}/${vendored.file}`), version: manifest.version };
}
