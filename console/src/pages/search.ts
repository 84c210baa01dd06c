import { ApiProblem } from '@platform/client';
import { h, loading, problemView, replace } from '../dom.ts';
import { COLLECTIONS, collectionByKey, entityPath, type Collection } from '../lib/collections.ts';
import { compileFilters, pageSize, splitQuery, withFilter, type QuickFilters } from '../lib/list-query.ts';
import { markPosition, queryErrorPosition } from '../lib/query-error.ts';
import { href } from '../lib/route.ts';
import type { Page, PageContext } from '../page.ts';
import { resultsTable, type EntityPage, type Listing } from './search-results.ts';

const EXAMPLES: Record<string, string> = {
  portfolios: "status eq 'ACTIVE' and name eq 'Pens*' orderby version_datetime desc",
  users: "last_name eq 'Love*' orderby last_name",
};

/** The quick filters' values in the URL. */
const FILTER_PARAMS = { status: 'st', manager: 'mg', moneyType: 'mt', text: 't' } as const satisfies Record<keyof QuickFilters, string>;

const filtersOf = (params: URLSearchParams): QuickFilters =>
  Object.fromEntries(Object.entries(FILTER_PARAMS).map(([name, param]) => [name, params.get(param) ?? undefined]));

const filterParams = (filters: QuickFilters): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(FILTER_PARAMS).map(([name, param]) => [param, filters[name as keyof QuickFilters] || undefined]));

/**
 * Any collection queried with the interface's query language. The quick filters write the filter
 * part of the query in the box, where the operator sees and may edit it; a heading orders it; a
 * parse error is marked where the interface says.
 */
export const searchPage: Page = async (ctx) => {
  ctx.title('Search');
  const { params } = ctx.route;
  const collection = collectionByKey(params.get('c')) ?? COLLECTIONS[0]!;
  const query = params.get('q') ?? '';
  const offset = Math.max(0, Number(params.get('o') ?? 0) || 0);
  const size = pageSize(params.get('n'));
  const filters = filtersOf(params);

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
  const quick = h('form', { class: 'quick-filters row wrap', 'aria-label': 'Quick filters' });
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
        'The quick filters write this query; edit it freely. Comparisons (eq, neq, lt, le, gt, ge, in […]) joined by and / or, then orderby and select; strings in single quotes, * as a wildcard. Empty: every entity.',
      ),
      errorBox,
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Search')),
  );
  ctx.main.append(form, quick, results, openById());

  // The same URL again (Search pressed twice) makes no hashchange: the query is run here.
  const go = (chosen: Collection, q: string, shown: Record<string, string | undefined>) => {
    const target = href('search', undefined, { c: chosen.key, q, n: String(size), ...shown, run: '1' });
    if (location.hash === target) void run(ctx, { collection: chosen, query: q, size, params: shown }, 0, input, errorBox, results);
    else location.hash = target;
  };
  const applyFilters = () => {
    const chosen = collectionByKey(select.value)!;
    const now = readFilters();
    // Another collection's ordering and selection name fields this one may lack: they are not carried over.
    const q = withFilter(chosen.key === collection.key ? input.value.trim() : '', compileFilters(chosen.filters, now));
    input.value = q;
    go(chosen, q, filterParams(now));
  };
  let readFilters = quickFilters(quick, collection, filters, applyFilters);
  // Another collection offers other filters: they start empty.
  select.addEventListener('change', () => {
    readFilters = quickFilters(quick, collectionByKey(select.value)!, {}, applyFilters);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = collectionByKey(select.value)!;
    const q = input.value.trim();
    const now = readFilters();
    // The filters stay shown only while the query's filter part is still what they compile to.
    go(chosen, q, splitQuery(q).filter === compileFilters(chosen.filters, now) ? filterParams(now) : {});
  });
  const listing: Listing = { collection, query, size, params: filterParams(filters) };
  if (params.has('run')) await run(ctx, listing, offset, input, errorBox, results);
  else input.focus();
};

/**
 * Draws the quick filters `collection` offers into `form`, set to `values`; `apply` runs when a
 * choice changes or the form is submitted. Answers a reader of the values shown.
 */
function quickFilters(form: HTMLFormElement, collection: Collection, values: QuickFilters, apply: () => void): () => QuickFilters {
  const spec = collection.filters;
  const choice = (id: string, label: string, options: readonly string[] | undefined, value: string | undefined) => {
    if (!options) return undefined;
    const control = h(
      'select',
      { id, name: id },
      h('option', { value: '' }, 'Any'),
      options.map((o) => h('option', { value: o, selected: o === value }, o)),
    );
    control.addEventListener('change', apply);
    return { control, field: h('div', { class: 'field' }, h('label', { for: id }, label), control) };
  };
  const status = choice('filter-status', 'Status', spec.status, values.status);
  const manager = choice('filter-manager', 'Manager', spec.manager, values.manager);
  const moneyType = choice('filter-money-type', 'Money type', spec.moneyType, values.moneyType);
  const where = spec.text.map((p) => (p === 'email' ? 'e-mail' : p.replace(/_/g, ' '))).join(', ');
  const text = h('input', {
    id: 'filter-text',
    name: 'filter-text',
    value: values.text ?? '',
    autocomplete: 'off',
    spellcheck: false,
    'aria-describedby': 'filter-text-hint',
  });
  form.replaceChildren(
    ...[status, manager, moneyType].flatMap((c) => (c ? [c.field] : [])),
    h(
      'div',
      { class: 'field grow' },
      h('label', { for: 'filter-text' }, 'Text'),
      text,
      h('p', { class: 'hint', id: 'filter-text-hint' }, `Found within ${where} (letter case counts).`),
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Filter')),
  );
  form.onsubmit = (event) => {
    event.preventDefault();
    apply();
  };
  return () => ({
    status: status?.control.value || undefined,
    manager: manager?.control.value || undefined,
    moneyType: moneyType?.control.value || undefined,
    text: text.value.trim() || undefined,
  });
}

async function run(ctx: PageContext, listing: Listing, offset: number, input: HTMLInputElement, errorBox: HTMLElement, results: HTMLElement): Promise<void> {
  const { collection, query, size } = listing;
  clearQueryError(input, errorBox);
  replace(results, loading(collection.label.toLowerCase()));
  const search = new URLSearchParams({ limit: String(size), offset: String(offset) });
  if (query) search.set('query', query);
  // The names of the entities the rows point to come in the same answer.
  if (collection.references.length) search.set('embed', collection.references.join(','));
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
  replace(results, resultsTable(listing, page));
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
