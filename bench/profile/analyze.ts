// A V8 CPU profile (.cpuprofile) as text: the frames with the most self time and the modules most
// often on the stack, as shares of the samples in which the thread was not idle.

type CallFrame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
export type CpuProfile = { nodes: ProfileNode[]; samples: number[] };
export type Share = { name: string; share: number };
export type ProfileSummary = { samples: number; busy: number; self: Share[]; onStack: Share[]; files: Share[] };

const IDLE = new Set(['(idle)', '(program)']);

/** Where a frame's code lives: an npm package, a folder of the repository, a Node.js module, or V8 itself. */
export function moduleOf(url: string): string {
  if (!url) return '(native)';
  const path = url.replace(/^file:\/\//, '');
  const npm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (npm) return npm[1]!;
  if (path.startsWith('node:')) return path;
  const repo = /\/((?:management-service|data-service|shared|bench|dev-stack|test-support)\/src(?:\/[^/]+)?)\//.exec(path);
  if (repo) return repo[1]!;
  return path.split('/').slice(-2).join('/');
}

/** The repository's file of a frame (shared/src/logger.ts), if it is one of ours. */
const repoFile = (url: string): string | undefined =>
  /\/((?:management-service|data-service|shared|bench|dev-stack|test-support)\/src\/.+)$/.exec(url.replace(/^file:\/\//, ''))?.[1];

/** A frame by its function and where it lives: a file of the repository (its line numbers are of the transpiled code), else the module. */
const frameName = (frame: CallFrame): string => `${frame.functionName || '(anonymous)'} ${repoFile(frame.url) ?? moduleOf(frame.url)}`;

/** Self time by frame and on-stack share by module, `top` of each, as fractions of the busy samples. */
export function summarize(profile: CpuProfile, top = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const onStack = new Map<string, number>();
  const files = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples) {
    const node = byId.get(id)!;
    if (IDLE.has(node.callFrame.functionName)) continue;
    busy++;
    const name = frameName(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + 1);
    const modules = new Set<string>();
    const ours = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.functionName !== '(root)') modules.add(moduleOf(frame.url));
      const file = repoFile(frame.url);
      if (file) ours.add(file);
    }
    for (const m of modules) onStack.set(m, (onStack.get(m) ?? 0) + 1);
    for (const f of ours) files.set(f, (files.get(f) ?? 0) + 1);
  }
  const shares = (counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, count]) => ({ name, share: busy === 0 ? 0 : count / busy }));
  return { samples: profile.samples.length, busy, self: shares(self), onStack: shares(onStack), files: shares(files) };
}

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

/** The summary as Markdown: two tables. */
export const summaryMarkdown = (s: ProfileSummary): string =>
  [
    `${s.busy} busy samples of ${s.samples} (1 ms each).`,
    '',
    '| self | frame |',
    '|---|---|',
    ...s.self.map((f) => `| ${percent(f.share)} | \`${f.name}\` |`),
    '',
    '| on the stack | module |',
    '|---|---|',
    ...s.onStack.map((f) => `| ${percent(f.share)} | \`${f.name}\` |`),
    '',
    '| on the stack | file of the repository |',
    '|---|---|',
    ...s.files.map((f) => `| ${percent(f.share)} | \`${f.name}\` |`),
  ].join('\n');
