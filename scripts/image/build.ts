// `npm run image:build`: the production image without any image registry (docs/adr/0047-container-image.md).
// The Debian bases (mmdebstrap; the build stage's with binutils) and the build stage's Node.js (npm registry, sha512 verified) are
// made here and reused while their recipe is unchanged; then the Dockerfile's stages build the
// image, tagged :<version> and :<short revision>. The SBOM and image.json go to .image/.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePodman } from '@platform/dev-stack/podman';
import { BUILD_BASE_IMAGE, ensureBaseImage } from './debian-base.ts';
import { ensureNodeBuildImage } from './node-build-image.ts';
import { copySbom, inspectImage, writeRecord } from './record.ts';
import { currentRevision } from './revision.ts';
import { readToolchain } from './toolchain.ts';

const IMAGE = 'localhost/investment-platform';
const OUTPUT = '.image';
// The host's CA bundle, which holds the CA of the egress proxy the build's npm goes through.
const NPM_CA = process.env.NPM_CA_FILE ?? '/etc/ssl/certs/ca-certificates.crt';

const log = (line: string) => console.log(`[image] ${line}`);
const started = Date.now();

const toolchain = readToolchain(join('scripts', 'image', 'toolchain.json'));
const podman = ensurePodman(log);
const base = ensureBaseImage(podman, toolchain.debian, log);
const buildBase = ensureBaseImage(podman, { ...toolchain.debian, include: [...toolchain.debian.include, 'binutils'] }, log, BUILD_BASE_IMAGE);
const buildImage = ensureNodeBuildImage(podman, toolchain, buildBase.reference, join('scripts', 'image', 'node-build.Containerfile'), log);

const { version, revision, source } = currentRevision();
const references = [`${IMAGE}:${version}`, `${IMAGE}:${revision}`];
log(`building ${references.join(' and ')}`);
podman.run(
  [
    'build',
    '--pull=never',
    // The npm ci stages reach the registry through the host's network (and its proxy settings).
    '--network=host',
    ...(existsSync(NPM_CA) ? ['--secret', `id=npm_ca,src=${NPM_CA}`] : []),
    '--build-arg',
    `BUILD_IMAGE=${buildImage.reference}`,
    '--build-arg',
    `RUNTIME_BASE=${base.reference}`,
    '--build-arg',
    `VERSION=${version}`,
    '--build-arg',
    `REVISION=${revision}`,
    '--build-arg',
    `SOURCE=${source}`,
    '--build-arg',
    `CREATED=${new Date().toISOString()}`,
    ...references.flatMap((reference) => ['--tag', reference]),
    '--file',
    'Dockerfile',
    '.',
  ],
  { stdio: ['ignore', 'inherit', 'inherit'] },
);

mkdirSync(OUTPUT, { recursive: true });
copySbom(podman, references[0]!, join(OUTPUT, 'sbom.cdx.json'));
const image = inspectImage(podman, references[0]!);
const buildSeconds = Math.round((Date.now() - started) / 100) / 10;
const record = writeRecord(OUTPUT, {
  reference: references[0]!,
  references,
  id: image.id,
  digest: image.digest,
  size_mb: image.sizeMb,
  node: toolchain.node.version,
  version,
  revision,
  build_seconds: buildSeconds,
  built_at: new Date().toISOString(),
});
log(`${references.join(', ')}: ${image.sizeMb} MB, Node.js ${toolchain.node.version}, ${buildSeconds} s`);
log(`wrote ${record} and ${join(OUTPUT, 'sbom.cdx.json')}`);
