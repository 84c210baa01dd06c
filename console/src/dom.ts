// Building the page: a small element helper and the loading, empty and error states every page shows.
import { ApiProblem } from '@platform/client';
import { plainIssue } from './lib/problem-text.ts';

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

function apply(el: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
}

/** An HTML element: attributes (`onClick` and the like become listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** An SVG element. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

export function replace(target: Element, ...children: Child[]): void {
  target.replaceChildren();
  append(target, children);
}

export const loading = (what: string) =>
  h('p', { class: 'state loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), `Loading ${what}…`);

export const empty = (message: string) => h('p', { class: 'state empty' }, message);

/**
 * A failed call: a problem+json answer shows its title, each violation in words (field, what is
 * wrong, an example), its code and request id; anything else its message. The detail of an answer
 * with violations repeats them as the service words them (regular expressions included), so it is
 * shown only when there are none.
 */
export function problemView(error: unknown): HTMLElement {
  if (!(error instanceof ApiProblem))
    return h('div', { class: 'state error', role: 'alert' }, h('p', { class: 'problem-title' }, 'The request failed'), h('p', {}, (error as Error).message));
  const problem = error;
  const issues = problem.errors.map(plainIssue);
  return h(
    'div',
    { class: 'state error problem', role: 'alert' },
    h('p', { class: 'problem-title' }, `${problem.status} ${problem.title}`),
    problem.detail && issues.length === 0 ? h('p', { class: 'problem-detail' }, problem.detail) : null,
    issues.length
      ? h(
          'ul',
          { class: 'problem-errors' },
          issues.map((issue) =>
            h(
              'li',
              { 'data-field': issue.field },
              h('code', {}, issue.field),
              issue.where ? ` (${issue.where})` : '',
              ` ${issue.problem}`,
              issue.example ? [', e.g. ', h('code', { class: 'example' }, issue.example)] : '',
              '.',
            ),
          ),
        )
      : null,
    h('p', { class: 'problem-meta' }, 'Code ', h('code', {}, problem.code), ' · Request id ', h('code', { class: 'request-id' }, problem.requestId)),
  );
}

export const formatTime = (iso: unknown) => (typeof iso === 'string' && iso ? new Date(iso).toLocaleString('en-GB', { timeZone: 'UTC' }) + ' UTC' : '');

export const formatNumber = (value: number | undefined, digits = 2) =>
  value === undefined || !Number.isFinite(value) ? '' : value.toLocaleString('en-GB', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** A short text of any value for a table cell. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * A data table: its column headers (a text is a header cell of its own), its rows (and footer
 * rows), scrolled within its box on a narrow screen.
 */
export function dataTable(table: { class?: string; caption?: string; head: Child[]; body: Child; foot?: Child }): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: table.class ?? 'data' },
      table.caption ? h('caption', { class: 'visually-hidden' }, table.caption) : null,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          table.head.map((cell) => (typeof cell === 'string' ? h('th', { scope: 'col' }, cell) : cell)),
        ),
      ),
      h('tbody', {}, table.body),
      table.foot ? h('tfoot', {}, table.foot) : null,
    ),
  );
}
