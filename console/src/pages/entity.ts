import type { components } from '@platform/api-types/management';
import { cellText, empty, formatTime, h, loading, problemView, replace } from '../dom.ts';
import { entityPath, hasVersions } from '../lib/collections.ts';
import { diffDocs, isChangedPath, readablePath, type Change } from '../lib/diff.ts';
import { jsonLines } from '../lib/json-lines.ts';
import { href } from '../lib/route.ts';
import type { Page, PageContext } from '../page.ts';

type Doc = Record<string, unknown>;
type Version = components['schemas']['EntityVersion'];
type VersionPage = components['schemas']['EntityVersionPage'];

/** Versions read per call, and the most the page lists. */
const VERSIONS_PER_CALL = 100;
const MAX_VERSIONS = 2000;

/**
 * One entity: its current JSON, its version log (who, when, which fields) and the differences
 * between any two versions, each read with `?version=` from the interface.
 */
export const entityPage: Page = async (ctx) => {
  const id = ctx.route.id ?? '';
  const parent = ctx.route.params.get('parent') ?? undefined;
  ctx.title(`Entity ${id}`);
  const path = entityPath(id, parent);
  if (!path) {
    ctx.main.append(empty(`${id || 'This'} is not an id the console can open (a transaction needs its portfolio: open it from the portfolio page).`));
    return;
  }
  const status = h('div', {}, loading('the entity'));
  ctx.main.append(status);
  const [doc, versions] = await Promise.all([
    ctx.session.management<Doc>('GET', path, undefined, ctx.signal),
    hasVersions(id) ? readVersions(ctx, path) : Promise.resolve(undefined),
  ]);
  status.remove();
  ctx.main.append(summary(id, doc));
  if (versions) ctx.main.append(versionSection(ctx, path, doc, versions));
  ctx.main.append(
    h(
      'section',
      { 'aria-labelledby': 'current-title' },
      h('h2', { id: 'current-title' }, `Current JSON (version ${cellText(doc.version) || '–'})`),
      h('details', { open: !versions }, h('summary', {}, 'Show the whole document'), jsonView(doc, new Set())),
    ),
  );
};

async function readVersions(ctx: PageContext, path: string): Promise<Version[]> {
  const versions: Version[] = [];
  for (let offset = 0; offset < MAX_VERSIONS; offset += VERSIONS_PER_CALL) {
    const page = await ctx.session.management<VersionPage>('GET', `${path}/versions/?limit=${VERSIONS_PER_CALL}&offset=${offset}`, undefined, ctx.signal);
    versions.push(...page.results);
    if (!page.next) break;
  }
  return versions;
}

function summary(id: string, doc: Doc): HTMLElement {
  const facts: [string, Node | string][] = [
    ['Id', h('code', {}, id)],
    ['Version', cellText(doc.version)],
    ['Last change', formatTime(doc.version_datetime)],
    ['Created', formatTime(doc.creation_datetime)],
  ];
  if (doc.status !== undefined) facts.push(['Status', h('span', { class: `badge status-${cellText(doc.status)}` }, cellText(doc.status))]);
  if (doc.deleted === true) facts.push(['Deleted', 'yes']);
  const links: HTMLElement[] = [];
  if (id.startsWith('P')) links.push(h('a', { href: href('portfolio', id) }, 'Portfolio page (holdings, transactions, optimizations, events)'));
  if (typeof doc.owned_by_user_id === 'string') links.push(h('a', { href: href('entity', doc.owned_by_user_id) }, `Owner ${doc.owned_by_user_id}`));
  if (typeof doc.portfolio_id === 'string') links.push(h('a', { href: href('entity', doc.portfolio_id) }, `Portfolio ${doc.portfolio_id}`));
  return h(
    'section',
    { class: 'summary', 'aria-label': 'Summary' },
    h(
      'dl',
      { class: 'facts' },
      facts.map(([term, value]) => h('div', {}, h('dt', {}, term), h('dd', {}, value))),
    ),
    links.length
      ? h(
          'p',
          { class: 'links' },
          links.flatMap((link, i) => (i ? [' · ', link] : [link])),
        )
      : null,
  );
}

/** The version log with a choice of two versions, and their differences below it. */
function versionSection(ctx: PageContext, path: string, current: Doc, versions: Version[]): HTMLElement {
  const latest = versions[versions.length - 1]?.version ?? 1;
  let from = Math.max(1, latest - 1);
  let to = latest;
  const cache = new Map<number, Promise<Doc>>([[latest, Promise.resolve(current)]]);
  const read = (version: number) => {
    if (!cache.has(version)) cache.set(version, ctx.session.management<Doc>('GET', `${path}?version=${version}`, undefined, ctx.signal));
    return cache.get(version)!;
  };
  const diffArea = h('div', { class: 'diff-area', 'aria-live': 'polite' });
  // Only the latest choice is drawn, whichever of the versions' reads answers last.
  let choice = 0;
  const compare = async () => {
    const mine = ++choice;
    const [a, b] = [from, to];
    replace(diffArea, loading(`versions ${a} and ${b}`));
    try {
      const [before, after] = await Promise.all([read(a), read(b)]);
      if (!ctx.signal.aborted && mine === choice) replace(diffArea, diffView(a, b, before, after));
    } catch (error) {
      if (!ctx.signal.aborted && mine === choice) replace(diffArea, problemView(error));
    }
  };
  const radio = (name: 'from' | 'to', version: number) =>
    h('input', {
      type: 'radio',
      name,
      value: String(version),
      checked: (name === 'from' ? from : to) === version,
      'aria-label': `${name === 'from' ? 'Compare from' : 'Compare to'} version ${version}`,
      onChange: () => {
        if (name === 'from') from = version;
        else to = version;
        void compare();
      },
    });
  const author = (user: string | null) =>
    user ? h('a', { class: 'mono', href: href('entity', user) }, user) : h('span', { class: 'muted' }, 'machine client or the service');
  const changed = (v: Version) => {
    const paths = v.version === 1 ? ['created'] : [...new Set(v.patch.map((op) => readablePath(op.path)))];
    const shown = paths.slice(0, 4).join(', ');
    return paths.length > 4 ? `${shown} and ${paths.length - 4} more` : shown;
  };
  const table = h(
    'table',
    { class: 'data versions' },
    h('caption', {}, `Version log: ${versions.length} version${versions.length === 1 ? '' : 's'}, newest first. Pick two to compare.`),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['From', 'To', 'Version', 'Time', 'Author', 'Changed fields'].map((label) => h('th', { scope: 'col' }, label)),
      ),
    ),
    h(
      'tbody',
      {},
      [...versions]
        .reverse()
        .map((v) =>
          h(
            'tr',
            { 'data-version': String(v.version) },
            h('td', {}, radio('from', v.version)),
            h('td', {}, radio('to', v.version)),
            h('th', { scope: 'row', class: 'num' }, String(v.version)),
            h('td', {}, formatTime(v.version_datetime)),
            h('td', {}, author(v.version_authored_by_user_id)),
            h('td', { class: 'mono small' }, changed(v)),
          ),
        ),
    ),
  );
  void compare();
  return h(
    'section',
    { class: 'versions-section', 'aria-labelledby': 'versions-title' },
    h('h2', { id: 'versions-title' }, 'Versions'),
    h('div', { class: 'two-columns' }, h('div', { class: 'table-wrap' }, table), diffArea),
  );
}

function diffView(from: number, to: number, a: Doc, b: Doc): HTMLElement {
  const changes = diffDocs(a, b);
  const paths = new Set(changes.map((c) => c.path));
  const title = h('h3', { id: 'diff-title' }, from === to ? `Version ${to}` : `Changes from version ${from} to version ${to}`);
  if (from === to) return h('div', {}, title, empty('The same version is chosen twice: pick two different ones.'), jsonView(b, new Set()));
  return h(
    'div',
    { class: 'diff', 'aria-labelledby': 'diff-title' },
    title,
    changes.length === 0
      ? empty('No field differs.')
      : h(
          'table',
          { class: 'data diff-table' },
          h('caption', { class: 'visually-hidden' }, `Fields changed between version ${from} and version ${to}`),
          h(
            'thead',
            {},
            h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, `Version ${from}`), h('th', { scope: 'col' }, `Version ${to}`)),
          ),
          h(
            'tbody',
            {},
            changes.map((c: Change) =>
              h(
                'tr',
                { class: `changed ${c.kind}`, 'data-path': c.path },
                h('th', { scope: 'row', class: 'mono' }, readablePath(c.path)),
                h('td', { class: 'mono before' }, c.kind === 'added' ? h('span', { class: 'muted' }, '(absent)') : h('del', {}, JSON.stringify(c.before))),
                h('td', { class: 'mono after' }, c.kind === 'removed' ? h('span', { class: 'muted' }, '(absent)') : h('ins', {}, JSON.stringify(c.after))),
              ),
            ),
          ),
        ),
    h('h4', {}, `Version ${to}, changed lines highlighted`),
    jsonView(b, paths),
  );
}

/** Pretty-printed JSON whose lines of changed fields are highlighted (and say so to a screen reader). */
function jsonView(doc: unknown, changed: ReadonlySet<string>): HTMLElement {
  return h(
    'pre',
    { class: 'json', tabindex: '0', 'aria-label': 'JSON document' },
    jsonLines(doc).map((line) => {
      const hit = changed.size > 0 && line.path !== '' && isChangedPath(line.path, changed);
      return h(
        'span',
        { class: hit ? 'line changed' : 'line', 'data-path': line.path },
        '  '.repeat(line.depth),
        hit ? h('span', { class: 'visually-hidden' }, 'changed: ') : null,
        line.text,
      );
    }),
  );
}
