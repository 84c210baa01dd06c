import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The workspace packages and what each declares of the others, against the graph drawn in
// docs/architecture.md (docs/adr/0041-package-graph.md). The lint rules hold every import to the
// importer's package.json; this holds the package.json files to the drawing.

const root = fileURLToPath(new URL('../../', import.meta.url));
const SCOPE = '@platform/';
/** The root package (scripts/ and the tools' configs) is drawn as `root`. */
const ROOT = 'root';

type Manifest = { name?: string; workspaces?: string[]; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };

/** An edge as drawn: `from --> to` for a dependency, `from -.-> to` for a devDependency. */
type Edge = `${string} ${'-->' | '-.->'} ${string}`;

const readManifest = (folder: string): Manifest => JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8')) as Manifest;

/** Every edge the package.json files declare between workspace packages, by folder name. */
export function declaredEdges(manifests: Map<string, Manifest>): { edges: Set<Edge>; unknown: string[] } {
  const folderOf = new Map([...manifests].map(([folder, manifest]) => [manifest.name, folder]));
  const edges = new Set<Edge>();
  const unknown: string[] = [];
  for (const [folder, manifest] of manifests) {
    for (const [field, arrow] of [
      ['dependencies', '-->'],
      ['devDependencies', '-.->'],
    ] as const) {
      for (const name of Object.keys(manifest[field] ?? {}).filter((n) => n.startsWith(SCOPE))) {
        const to = folderOf.get(name);
        if (to === undefined) unknown.push(`${folder} declares ${name}, which is no workspace package`);
        else edges.add(`${folder} ${arrow} ${to}`);
      }
    }
  }
  return { edges, unknown };
}

const EDGE_LINE = /^\s*([\w-]+)\s+(-->|-\.->)\s+([\w-]+)\s*$/;

/** The edges of the first mermaid block under the heading `## What may import what`. */
export function drawnEdges(markdown: string): Set<Edge> {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('What may import what'));
  const block = section?.match(/```mermaid\n([\s\S]*?)```/)?.[1];
  if (block === undefined) throw new Error('docs/architecture.md: no mermaid block under "## What may import what"');
  const edges = new Set<Edge>();
  for (const line of block.split('\n')) {
    const match = line.match(EDGE_LINE);
    if (match) edges.add(`${match[1]} ${match[2] as '-->' | '-.->'} ${match[3]}`);
  }
  return edges;
}

/** What the drawing leaves out and what it draws that no package.json declares. */
export function graphDifferences(declared: Set<Edge>, drawn: Set<Edge>): { undrawn: Edge[]; absent: Edge[] } {
  return { undrawn: [...declared].filter((e) => !drawn.has(e)).sort(), absent: [...drawn].filter((e) => !declared.has(e)).sort() };
}

function workspaceManifests(): Map<string, Manifest> {
  const top = readManifest('.');
  return new Map<string, Manifest>([[ROOT, top], ...(top.workspaces ?? []).map((folder): [string, Manifest] => [folder, readManifest(folder)])]);
}

describe('the package graph (package.json files against docs/architecture.md)', () => {
  const manifests = new Map<string, Manifest>([
    ['shared', { name: '@platform/shared', devDependencies: { '@platform/test-support': '0.1.0', knex: '3.3.0' } }],
    ['test-support', { name: '@platform/test-support', dependencies: { '@platform/shared': '0.1.0' } }],
    ['console', { name: '@platform/console', dependencies: { '@platform/client': '0.1.0' } }],
  ]);
  const drawing = (lines: string[]) => `# A\n\n## What may import what\n\n\`\`\`mermaid\ngraph TD\n${lines.join('\n')}\n\`\`\`\n\n## Next\n`;

  it('reads dependencies as solid arrows, devDependencies as dotted ones, and names an unknown package', () => {
    const { edges, unknown } = declaredEdges(manifests);
    assert.deepEqual([...edges].sort(), ['shared -.-> test-support', 'test-support --> shared']);
    assert.deepEqual(unknown, ['console declares @platform/client, which is no workspace package']);
  });

  it('finds an edge the drawing leaves out, one it draws in vain, and one drawn with the wrong arrow', () => {
    const { edges } = declaredEdges(manifests);
    const drawn = drawnEdges(drawing(['  shared --> test-support', '  test-support --> shared', '  clients --> shared', '  %% a comment --> ignored']));
    assert.deepEqual(graphDifferences(edges, drawn), { undrawn: ['shared -.-> test-support'], absent: ['clients --> shared', 'shared --> test-support'] });
    assert.deepEqual(graphDifferences(edges, drawnEdges(drawing(['  shared -.-> test-support', '  test-support --> shared']))), { undrawn: [], absent: [] });
  });

  it('refuses a document without the drawing', () => {
    assert.throws(() => drawnEdges('# A\n\n## What may import what\n\nno drawing\n'), /no mermaid block/);
  });

  it('every workspace package declares exactly the edges docs/architecture.md draws', () => {
    const { edges, unknown } = declaredEdges(workspaceManifests());
    assert.deepEqual(unknown, []);
    assert.ok(edges.size > 0, 'the package.json files declare no edge at all: are the workspaces read?');
    const { undrawn, absent } = graphDifferences(edges, drawnEdges(readFileSync(join(root, 'docs/architecture.md'), 'utf8')));
    assert.deepEqual(undrawn, [], 'declared in a package.json but not drawn in docs/architecture.md (draw it, or drop the dependency)');
    assert.deepEqual(absent, [], 'drawn in docs/architecture.md but declared by no package.json (remove it from the drawing)');
  });
});
