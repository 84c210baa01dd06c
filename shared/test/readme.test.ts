import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The README is a newcomer's first page; the depth lives in docs/ (docs/adr/0055-documentation-pages.md). */
const README_MAX_LINES = 300;

/** The pages of docs/ that each hold one topic, in the README's map of the docs. */
const TOPIC_PAGES = [
  'getting-started',
  'management-interface',
  'funding',
  'robo-advice',
  'suitability',
  'data-interface',
  'events',
  'console',
  'configuration',
  'personal-data',
  'operations',
  'benchmarks',
].map((name) => `docs/${name}.md`);

/** The README and every page of docs/ (records aside): their links must lead somewhere. */
const PAGES = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** `page: link` of every relative link of `page` whose file or heading does not exist. */
function brokenLinks(page: string): string[] {
  const text = readFileSync(join(root, page), 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue;
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const file = path === '' ? join(root, page) : join(root, dirname(page), path);
    if (!existsSync(file)) {
      broken.push(`${page}: ${target} (no file ${relative(root, file)})`);
      continue;
    }
    if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
  }
  return broken;
}

describe('README and docs/ pages', () => {
  it(`the README stays a short first page: at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n').length;
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines; move the depth to a page of docs/`);
  });

  it('every topic page starts with its title and a summary of two lines', () => {
    for (const page of TOPIC_PAGES) {
      const [title, blank, first, second, after] = readFileSync(join(root, page), 'utf8').split('\n');
      assert.match(title!, /^# /, `${page} starts with a title`);
      assert.deepEqual([blank, after], ['', ''], `${page}: a blank line, two lines of summary, a blank line`);
      assert.ok(first!.trim() && second!.trim() && !first!.startsWith('#') && !second!.startsWith('#'), `${page}: a two-line summary`);
    }
  });

  it("the README's map of the docs names every topic page", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const page of TOPIC_PAGES) assert.ok(readme.includes(`](${page})`), `README.md links ${page}`);
  });

  it('every relative link of the README and the docs/ pages names a file, and a heading of it that exists', () => {
    const broken = PAGES.flatMap(brokenLinks);
    assert.deepEqual(broken, []);
  });

  it('anchors follow GitHub: punctuation dropped, repeated headings numbered', () => {
    assert.deepEqual(
      [...anchorsOf("# Production image (`npm run image:build`)\n## The demo tenant's policies\n```\n# not a heading\n```\n## Notes\n## Notes\n")],
      ['production-image-npm-run-imagebuild', 'the-demo-tenants-policies', 'notes', 'notes-1'],
    );
  });
});
