// The search page's table of one collection page: headings in words that sort by their field, ids
// as links with the names of the entities they point to, page size and paging both ways.
import type { components } from '@platform/api-types/management';
import { cellText, dataTable, empty, formatTime, h } from '../dom.ts';
import { entityName, isEntityId, valueAt, type Collection } from '../lib/collections.ts';
import { headingLabel } from '../lib/headings.ts';
import { PAGE_SIZES, currentOrder, pageOffsets, toggleOrder } from '../lib/list-query.ts';
import { href } from '../lib/route.ts';

type Schemas = components['schemas'];
/**
 * A page of any collection of COLLECTIONS. The contract's common `PageLinks` has no `results`, so
 * the page is the union of the collections' own page schemas.
 */
export type EntityPage =
  | Schemas['PortfolioPage']
  | Schemas['UserPage']
  | Schemas['PolicyPage']
  | Schemas['GoalPage']
  | Schemas['HorizonPage']
  | Schemas['RiskProfilePage']
  | Schemas['InstrumentGroupPage']
  | Schemas['SuitabilityProfilePage']
  | Schemas['QuestionnairePage'];

/** What the table was asked for: the URL's parameters other than the offset are kept by every link it draws. */
export type Listing = { collection: Collection; query: string; size: number; params: Record<string, string | undefined> };

/** The search page's URL for `listing` with some parameters changed. */
export const listHref = (listing: Listing, changes: Record<string, string | undefined>) =>
  href('search', undefined, { ...listing.params, c: listing.collection.key, q: listing.query, n: String(listing.size), run: '1', ...changes });

/** An id as a link to its entity's page, the entity's name beside it when the page embedded it. */
function idLink(id: string, embedded: Record<string, unknown>): HTMLElement {
  const name = Object.hasOwn(embedded, id) ? entityName(embedded[id]) : undefined;
  return h(
    'a',
    { class: 'ref', href: href('entity', id), 'data-ref': id },
    name ? [h('span', { class: 'ref-name' }, name), ' '] : null,
    h('span', { class: name ? 'mono ref-id' : 'mono' }, id),
  );
}

/** A time to the minute (UTC), the full time in its title: the lists keep their columns narrow. */
function shortTime(iso: unknown): HTMLElement | string {
  if (typeof iso !== 'string' || !iso) return '';
  return h('time', { datetime: iso, title: formatTime(iso) }, `${iso.slice(0, 10)} ${iso.slice(11, 16)}`);
}

/** An enum value (`ROBO_ADVISOR_DISCRETIONARY`) that may wrap after its underscores, shown as the query names it. */
const wrappable = (text: string) => text.split('_').flatMap((part, i) => (i ? ['_', h('wbr'), part] : [part]));

function cell(value: unknown, embedded: Record<string, unknown>): Node | string | (Node | string)[] {
  if (isEntityId(value)) return idLink(value, embedded);
  if (typeof value === 'string' && /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(value)) return wrappable(value);
  if (Array.isArray(value) && value.length && value.every(isEntityId)) {
    const links = value.flatMap((id, i) => [i ? ', ' : null, idLink(id, embedded)]).filter((n) => n !== null);
    return h('span', {}, ...links);
  }
  return cellText(value);
}

/** A heading that orders the query by `path` (and the other way round once ordered by it). */
function sortHeading(listing: Listing, path: string, label: string): HTMLElement {
  const order = currentOrder(listing.query);
  const sorted = order?.path === path ? (order.descending ? 'descending' : 'ascending') : undefined;
  return h(
    'th',
    { scope: 'col', 'aria-sort': sorted ?? null, 'data-path': path },
    h(
      'a',
      { class: 'sort', href: listHref(listing, { q: toggleOrder(listing.query, path), o: undefined }), title: `Order by ${label.toLowerCase()}` },
      label,
      h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, sorted === 'ascending' ? ' ▲' : sorted === 'descending' ? ' ▼' : ''),
    ),
  );
}

/** The number of rows a page shows, chosen from PAGE_SIZES; a choice goes back to the first page. */
function pageSizeChoice(listing: Listing): HTMLElement {
  const select = h(
    'select',
    { id: 'page-size', name: 'page-size' },
    PAGE_SIZES.map((n) => h('option', { value: String(n), selected: n === listing.size }, String(n))),
  );
  select.addEventListener('change', () => {
    location.hash = listHref(listing, { n: select.value, o: undefined });
  });
  return h('div', { class: 'page-size' }, h('label', { for: 'page-size' }, 'Rows per page'), select);
}

export function resultsTable(listing: Listing, page: EntityPage): HTMLElement {
  const { collection, query, size } = listing;
  const noun = collection.label.toLowerCase();
  if (page.results.length === 0)
    return h(
      'div',
      {},
      empty(query ? `No ${noun} match this query.` : `The tenant has no ${noun} yet.`),
      page.offset > 0 ? h('a', { class: 'button secondary', href: listHref(listing, { o: undefined }) }, 'First page') : null,
    );
  const embedded = (page._embedded ?? {}) as Record<string, unknown>;
  // A `select` query answers the id and the selected fields only.
  const selection = page.results.every((r) => !('version' in r));
  const columns = selection ? [...new Set(page.results.flatMap((r) => Object.keys(r)))].filter((k) => k !== 'id') : collection.columns;
  const first = page.offset + 1;
  const last = page.offset + page.results.length;
  const offsets = pageOffsets(page.offset, size, Boolean(page.next));
  const pager = (label: string, rel: string, offset: number | undefined) =>
    offset === undefined
      ? h('span', { class: 'button secondary', 'aria-disabled': 'true' }, label)
      : h('a', { class: 'button secondary', rel, href: listHref(listing, { o: offset ? String(offset) : undefined }) }, label);
  return h(
    'div',
    {},
    h(
      'div',
      { class: 'table-head' },
      h('p', { class: 'count' }, `${first}–${last} of ${page.count} ${noun}`),
      h('div', { class: 'pager' }, pageSizeChoice(listing), pager('Previous page', 'prev', offsets.previous), pager('Next page', 'next', offsets.next)),
    ),
    dataTable({
      caption: `${collection.label} matching the query`,
      head: [
        sortHeading(listing, 'id', 'Id'),
        columns.map((c) => sortHeading(listing, c, headingLabel(c))),
        selection ? [] : [sortHeading(listing, 'creation_datetime', 'Created'), sortHeading(listing, 'version_datetime', 'Last change')],
      ],
      body: page.results.map((entity) =>
        h(
          'tr',
          { 'data-id': entity.id },
          h(
            'td',
            {},
            h('a', { class: 'mono', href: href('entity', entity.id) }, entity.id),
            collection.key === 'portfolios'
              ? [' ', h('a', { class: 'tag', href: href('portfolio', entity.id), 'aria-label': `Portfolio page of ${entity.id}` }, 'portfolio')]
              : null,
          ),
          columns.map((c) => h('td', { 'data-path': c }, cell(valueAt(entity, c), embedded))),
          selection
            ? null
            : [
                h('td', {}, shortTime(entity.creation_datetime)),
                // The version number is on the entity's page, with its log.
                h('td', { 'data-version': String(entity.version) }, shortTime(entity.version_datetime)),
              ],
        ),
      ),
    }),
  );
}
