import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGES = ['shared/src', 'clients/src', 'management-service/src', 'data-service/src'];
const IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?[^'";]*?from\s+'(\.[^']+)'/gm;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'generated') return [];
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Folder → folders it imports from (type imports too), with one import that makes each edge. A
 * folder may use its own subfolders; those edges are not counted.
 */
export function folderGraph(files: { path: string; text: string }[]): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const { path, text } of files) {
    const from = dirname(path);
    for (const [, spec] of text.matchAll(IMPORT)) {
      const to = dirname(resolve(from, spec!));
      if (to === from || to.startsWith(`${from}/`)) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      graph.get(from)!.set(to, `${relative(root, path)} imports ${spec}`);
    }
  }
  return graph;
}

/** Every cycle of folders, each as its edges' imports; empty when the folders form layers. */
export function folderCycles(graph: Map<string, Map<string, string>>): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const pathTo = (from: string, to: string, visited: Set<string>): string[] | undefined => {
    if (from === to) return [];
    if (visited.has(from)) return undefined;
    visited.add(from);
    for (const [next, why] of graph.get(from) ?? []) {
      const rest = pathTo(next, to, visited);
      if (rest) return [why, ...rest];
    }
    return undefined;
  };
  for (const [from, edges] of graph) {
    for (const [to, why] of edges) {
      const back = pathTo(to, from, new Set());
      if (!back) continue;
      const cycle = [why, ...back];
      const key = [...cycle].sort().join('|');
      if (!seen.has(key)) {
        seen.add(key);
        cycles.push(cycle);
      }
    }
  }
  return cycles;
}

describe('folders import in layers (no folder cycles; file cycles are the lint rule import-x/no-cycle)', () => {
  it('finds a cycle of folders when there is one', () => {
    const files = [
      { path: join(root, 'x/src/a/one.ts'), text: "import { b } from '../b/two.ts';" },
      { path: join(root, 'x/src/b/two.ts'), text: "import type { A } from '../a/three.ts';" },
      { path: join(root, 'x/src/c/four.ts'), text: "import { b } from '../b/two.ts';\nimport { sub } from './sub/five.ts';" },
      { path: join(root, 'x/src/c/sub/five.ts'), text: "import { c } from '../four.ts';" },
    ];
    const cycles = folderCycles(folderGraph(files));
    assert.equal(cycles.length, 1, JSON.stringify(cycles));
    assert.deepEqual([...cycles[0]!].sort(), ['x/src/a/one.ts imports ../b/two.ts', 'x/src/b/two.ts imports ../a/three.ts']);
  });

  it('holds for shared, the client package, the management service and the data service', () => {
    const files = PACKAGES.flatMap((pkg) => sources(join(root, pkg))).map((path) => ({ path, text: readFileSync(path, 'utf8') }));
    const cycles = folderCycles(folderGraph(files));
    assert.deepEqual(
      cycles.map((cycle) => cycle.join(' → ')),
      [],
      'folders that import each other, directly or around a circle',
    );
  });
});
