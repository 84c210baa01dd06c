import type { components } from '@platform/api-types/management';
import { ApiProblem } from '@platform/client';
import { cellText, dataTable, empty, formatTime, h, loading, problemView, replace } from '../dom.ts';
import { COLLECTIONS, collectionByKey, entityPath, valueAt, type Collection } from '../lib/collections.ts';
import { markPosition, queryErrorPosition } from '../lib/query-error.ts';
import { href } from '../lib/route.ts';
import type { Page, PageContext } from '../page.ts';

const PAGE_SIZE = 20;
type Schemas = components['schemas'];
/**
 * A page of any collection of COLLECTIONS. The contract's common `PageLinks` has no `results`, so
 * the page is the union of the collections' own page schemas.
 */
type EntityPage =
  | Schemas['PortfolioPage']
  | Schemas['UserPage']
  | Schemas['PolicyPage']
  | Schemas['GoalPage']
  | Schemas['HorizonPage']
  | Schemas['RiskProfilePage']
  | Schemas['InstrumentGroupPage']
  | Schemas['SuitabilityProfilePage']
  | Schemas['QuestionnairePage'];

const EXAMPLES: Record<string, string> = {
  portfolios: "status eq 'ACTIVE' and name eq 'Pens*' orderby version_datetime desc",
  users: "last_name eq 'Love*' orderby last_name",
};

/** Any collection queried with the interface's query language; a parse error is marked where the interface says. */
export const searchPage: Page = async (ctx) => {
  ctx.title('Search');
  const { params } = ctx.route;
  const collection = collectionByKey(params.get('c')) ?? COLLECTIONS[0]!;
  const query = params.get('q') ?? '';
  const offset = Math.max(0, Number(params.get('o') ?? 0) || 0);

  const select = h(
    'select',
    { id: 'collection', name: 'collection' },
    COLLECTIONS.map((c) => h('option', { value: c.key, selected: c.key === collection.key }, c.label)),
  );
  const input = h('input', {
    id: 'query',
    name: 'query',
    class: 'mono',
    value: query,
    autocomplete: 'off',
    spellcheck: false,
    placeholder: EXAMPLES[collection.key] ?? "name eq 'A*'",
    'aria-describedby': 'query-hint',
  });
  const errorBox = h('div', { id: 'query-error', class: 'query-error', hidden: true });
  const results = h('section', { class: 'results', 'aria-label': 'Results', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'search', role: 'search' },
    h('div', { class: 'field' }, h('label', { for: 'collection' }, 'Collection'), select),
    h(
      'div',
      { class: 'field grow' },
      h('label', { for: 'query' }, 'Query'),
      input,
      h(
        'p',
        { class: 'hint', id: 'query-hint' },
        'Comparisons (eq, neq, lt, le, gt, ge, in […]) joined by and / or, then orderby and select; strings in single quotes, * as a wildcard. Empty: every entity.',
      ),
      errorBox,
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Search')),
  );
  ctx.main.append(form, results, openById());

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const target = href('search', undefined, { c: select.value, q: input.value.trim(), run: '1' });
    if (location.hash === target) void run(ctx, collectionByKey(select.value)!, input.value.trim(), 0, input, errorBox, results);
    else location.hash = target;
  });
  if (params.has('run')) await run(ctx, collection, query, offset, input, errorBox, results);
  else input.focus();
};

async function run(
  ctx: PageContext,
  collection: Collection,
  query: string,
  offset: number,
  input: HTMLInputElement,
  errorBox: HTMLElement,
  results: HTMLElement,
): Promise<void> {
  clearQueryError(input, errorBox);
  replace(results, loading(collection.label.toLowerCase()));
  const search = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset) });
  if (query) search.set('query', query);
  let page: EntityPage;
  try {
    page = await ctx.session.management<EntityPage>('GET', `${collection.path}?${search.toString()}`, undefined, ctx.signal);
  } catch (error) {
    if (ctx.signal.aborted) return;
    const position = error instanceof ApiProblem ? queryErrorPosition(error) : undefined;
    if (error instanceof ApiProblem && position !== undefined) {
      showQueryError(input, errorBox, query, position, error);
      results.replaceChildren();
    } else {
      replace(results, problemView(error));
    }
    return;
  }
  replace(results, resultsTable(collection, query, page));
}

function clearQueryError(input: HTMLInputElement, errorBox: HTMLElement): void {
  errorBox.hidden = true;
  errorBox.replaceChildren();
  errorBox.removeAttribute('role');
  input.removeAttribute('aria-invalid');
  input.setAttribute('aria-describedby', 'query-hint');
}

/** The query as sent, its character at `position` marked (a caret after it at the end), and the interface's message. */
function showQueryError(input: HTMLInputElement, errorBox: HTMLElement, query: string, position: number, error: ApiProblem): void {
  const marked = markPosition(query, position);
  replace(
    errorBox,
    h('p', { class: 'query-error-detail' }, error.detail ?? 'The query does not parse.'),
    h(
      'pre',
      { class: 'query-mark', 'aria-hidden': 'true' },
      marked.before,
      h('mark', { 'data-position': String(position), class: marked.atEnd ? 'at-end' : null }, marked.atEnd ? ' ' : marked.at),
      marked.after,
    ),
    h('p', { class: 'problem-meta' }, 'Code ', h('code', {}, error.code), ' · Request id ', h('code', { class: 'request-id' }, error.requestId)),
  );
  errorBox.hidden = false;
  errorBox.setAttribute('role', 'alert');
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', 'query-hint query-error');
  input.focus();
  input.setSelectionRange(marked.before.length, marked.before.length + marked.at.length);
}

function resultsTable(collection: Collection, query: string, page: EntityPage): HTMLElement {
  if (page.results.length === 0)
    return empty(query ? `No ${collection.label.toLowerCase()} match this query.` : `The tenant has no ${collection.label.toLowerCase()} yet.`);
  // A `select` query answers the id and the selected fields only.
  const selection = page.results.every((r) => !('version' in r));
  const columns = selection ? [...new Set(page.results.flatMap((r) => Object.keys(r)))].filter((k) => k !== 'id') : collection.columns;
  const first = page.offset + 1;
  const last = page.offset + page.results.length;
  const pager = (label: string, offset: number) =>
    h('a', { class: 'button secondary', href: href('search', undefined, { c: collection.key, q: query, o: String(offset), run: '1' }) }, label);
  return h(
    'div',
    {},
    h(
      'div',
      { class: 'table-head' },
      h('p', { class: 'count' }, `${first}–${last} of ${page.count} ${collection.label.toLowerCase()}`),
      h(
        'div',
        { class: 'pager' },
        page.offset > 0 ? pager('Previous page', Math.max(0, page.offset - PAGE_SIZE)) : null,
        page.next ? pager('Next page', page.offset + PAGE_SIZE) : null,
      ),
    ),
    dataTable({
      caption: `${collection.label} matching the query`,
      head: ['Id', ...columns, ...(selection ? [] : ['Version', 'Last change'])],
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
          columns.map((c) => h('td', {}, cellText(valueAt(entity, c)))),
          selection ? null : [h('td', { class: 'num' }, cellText(entity.version)), h('td', {}, formatTime(entity.version_datetime))],
        ),
      ),
    }),
  );
}

/** An id pasted from a log or a ticket, opened at once. */
function openById(): HTMLElement {
  const input = h('input', { id: 'open-id', name: 'open-id', class: 'mono', autocomplete: 'off', spellcheck: false, 'aria-describedby': 'open-id-hint' });
  const hint = h('p', { class: 'hint', id: 'open-id-hint' }, 'A letter and 26 characters, e.g. P01HZC48CNR9YNY5M4C8F5S2HT9.');
  const form = h(
    'form',
    { class: 'open-id row' },
    h('div', { class: 'field' }, h('label', { for: 'open-id' }, 'Open an entity by id'), input, hint),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Open')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = input.value.trim();
    if (entityPath(id)) {
      location.hash = href('entity', id);
      return;
    }
    input.setAttribute('aria-invalid', 'true');
    hint.textContent = id.startsWith('T')
      ? "A transaction opens from its portfolio's page."
      : `"${id}" is not an id of the interface: a letter and 26 characters, e.g. P01HZC48CNR9YNY5M4C8F5S2HT9.`;
    input.focus();
  });
  return h('section', { class: 'open', 'aria-label': 'Open by id' }, form);
}
