import { isObj, podSpecs, type Obj, type Resource } from './resources.ts';

// What the containers of the platform's own image run, and how production names that image
// (docs/adr/0046-supply-chain.md): the compiled JavaScript of a package, by a path that exists in
// the repository as TypeScript, with no loader of TypeScript; in production, one image by digest.

/** The packages the build compiles, each `<pkg>/src/<x>.ts` to `<pkg>/dist/<x>.js`. */
export const COMPILED_PACKAGES = ['api-types', 'shared', 'management-service', 'data-service', 'cli'] as const;

const IMAGE_NAME = 'investment-platform';
const ENTRY = new RegExp(`^(${COMPILED_PACKAGES.join('|')})/dist/((?:[A-Za-z0-9_-][A-Za-z0-9._-]*/)*[A-Za-z0-9_-][A-Za-z0-9._-]*)\\.js$`);
const DIGEST = /^[^@\s]+@sha256:[0-9a-f]{64}$/;

/** Whether an image reference names the platform's image, in any registry, by tag, digest or neither. */
export function isPlatformImage(image: unknown): boolean {
  if (typeof image !== 'string') return false;
  const name = image.split('@')[0]!.replace(/:[^/:]*$/, '');
  return name.split('/').at(-1) === IMAGE_NAME;
}

/** A pod spec's containers and init containers. */
export const podContainers = (spec: Obj): Obj[] =>
  [...((spec.initContainers as unknown[] | undefined) ?? []), ...((spec.containers as unknown[] | undefined) ?? [])].filter(isObj);

/** The containers of a workload that run the platform's image. */
export const platformContainers = (r: Resource): Obj[] =>
  podSpecs(r)
    .flatMap(podContainers)
    .filter((c) => isPlatformImage(c.image));

/**
 * What is wrong with the command of a container of the platform's image: it must be
 * `node <pkg>/dist/<x>.js …` for a compiled package whose `<pkg>/src/<x>.ts` exists (`sourceExists`
 * answers for a path relative to the repository root), with nothing that loads TypeScript.
 */
export function entryPointProblems(container: Obj, sourceExists: (path: string) => boolean): string[] {
  const where = `container ${String(container.name)}`;
  const argv = [...((container.command as unknown[] | undefined) ?? []), ...((container.args as unknown[] | undefined) ?? [])].map(String);
  const problems: string[] = [];
  const loader = argv.find((a) => /(^|[/=])tsx\b/.test(a) || a === '--import' || a.startsWith('--import=') || /^--(experimental-)?loader\b/.test(a));
  if (loader !== undefined) problems.push(`${where}: runs a TypeScript loader (${loader}); the image runs compiled JavaScript`);
  if (argv.length === 0) return [...problems, `${where}: names no command; say which entry point it runs (node <pkg>/dist/<x>.js)`];
  if (argv[0] !== 'node') return [...problems, `${where}: runs ${argv[0]}, not node <pkg>/dist/<x>.js`];
  const script = argv[1] ?? '';
  const entry = ENTRY.exec(script);
  if (!entry) return [...problems, `${where}: runs node ${script}, not an entry point <pkg>/dist/<x>.js of ${COMPILED_PACKAGES.join(', ')}`];
  const source = `${entry[1]}/src/${entry[2]}.ts`;
  if (!sourceExists(source)) problems.push(`${where}: runs ${script}, but ${source} does not exist (a renamed or removed entry point)`);
  return problems;
}

/** What is wrong with a production image reference: it must be pinned by digest (`@sha256:` and 64 hex digits). */
export function digestProblems(container: Obj): string[] {
  const image = String(container.image);
  return DIGEST.test(image) ? [] : [`container ${String(container.name)}: image ${image} is not pinned by digest (<name>@sha256:<64 hex>)`];
}

/** The entry point of every platform container of the objects, and in production their digest. */
export function platformImageProblems(label: string, objects: Resource[], sourceExists: (path: string) => boolean, production: boolean): string[] {
  const problems: string[] = [];
  for (const r of objects)
    for (const c of platformContainers(r)) {
      const id = `${label}: ${r.kind} ${r.metadata?.namespace ?? ''}/${r.metadata?.name}`;
      for (const problem of [...entryPointProblems(c, sourceExists), ...(production ? digestProblems(c) : [])]) problems.push(`${id}: ${problem}`);
    }
  return problems;
}
