/**
 * The search page's quick filters and sortable headings, written as the interface's query language
 * (docs/adr/0011-query-language.md) so that the operator sees, and may edit, the very query that is
 * sent. Pure.
 */
import type { QuickFilterSpec } from './collections.ts';

export type QuickFilters = { status?: string; manager?: string; moneyType?: string; text?: string };

/** A string of the query language: single quotes, a quote inside doubled. */
export const quoted = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * `'*text*'`: contains `text`, its own stars taken literally (`\*`). The language has no escape for
 * a backslash, so a backslash the text ends with would turn the closing wildcard into a literal
 * star: such a text is looked for at the end of the field instead.
 */
export function containsValue(text: string): string {
  const literal = text.replace(/\*/g, '\\*');
  return quoted(literal.endsWith('\\') ? `*${literal}` : `*${literal}*`);
}

/**
 * The filter part of a query from the quick filters a collection offers: equal status, manager and
 * money type, the free text in any of the text fields; empty when no filter is set. A value the
 * collection does not offer (an edited URL) is left out rather than sent.
 */
export function compileFilters(spec: QuickFilterSpec, filters: QuickFilters): string {
  const terms: string[] = [];
  const choice = (path: string, allowed: readonly string[] | undefined, value: string | undefined) => {
    if (value && allowed?.includes(value)) terms.push(`${path} eq ${quoted(value)}`);
  };
  choice('status', spec.status, filters.status);
  choice('config.manager', spec.manager, filters.manager);
  choice('money_type', spec.moneyType, filters.moneyType);
  const text = filters.text?.trim();
  if (text && spec.text.length) {
    const anyOf = spec.text.map((path) => `${path} eq ${containsValue(text)}`);
    terms.push(anyOf.length === 1 ? anyOf[0]! : `(${anyOf.join(' or ')})`);
  }
  return terms.join(' and ');
}

export type QueryParts = { filter: string; orderby: string; select: string };

/** Where each `orderby` and `select` keyword starts, outside quoted strings. */
function keywords(query: string): { orderby?: number; select?: number } {
  const found: { orderby?: number; select?: number } = {};
  const word = /[A-Za-z_$][\w.$]*/y;
  for (let i = 0; i < query.length;) {
    const ch = query[i]!;
    if (ch === "'") {
      // To the closing quote; a doubled quote closes and reopens the string, which reads the same.
      const end = query.indexOf("'", i + 1);
      i = end < 0 ? query.length : end + 1;
      continue;
    }
    word.lastIndex = i;
    const match = word.exec(query);
    if (!match) {
      i++;
      continue;
    }
    const lower = match[0].toLowerCase();
    if (lower === 'orderby' && found.orderby === undefined) found.orderby = i;
    if (lower === 'select' && found.select === undefined) found.select = i;
    i += match[0].length;
  }
  return found;
}

/** A query cut into its filter, `orderby …` and `select …` parts (each trimmed, empty when absent). */
export function splitQuery(query: string): QueryParts {
  const { orderby, select } = keywords(query);
  const filterEnd = Math.min(orderby ?? query.length, select ?? query.length);
  const orderEnd = select !== undefined && orderby !== undefined && select > orderby ? select : query.length;
  return {
    filter: query.slice(0, filterEnd).trim(),
    orderby: orderby !== undefined ? query.slice(orderby, orderEnd).trim() : '',
    select: select !== undefined ? query.slice(select, orderby !== undefined && orderby > select ? orderby : query.length).trim() : '',
  };
}

export const joinQuery = (parts: QueryParts) => [parts.filter, parts.orderby, parts.select].filter(Boolean).join(' ');

/** The query with its filter part replaced, its ordering and selection kept. */
export const withFilter = (query: string, filter: string) => joinQuery({ ...splitQuery(query), filter });

export type Order = { path: string; descending: boolean };

/** The first key of the query's `orderby`, or undefined when it has none. */
export function currentOrder(query: string): Order | undefined {
  const { orderby } = splitQuery(query);
  const first = /^orderby\s+([A-Za-z_$][\w.$]*)(?:\s+(asc|desc)\b)?/i.exec(orderby);
  return first ? { path: first[1]!, descending: first[2]?.toLowerCase() === 'desc' } : undefined;
}

/**
 * The query ordered by `path` as a click on its heading asks: ascending first, the other way round
 * when it is ordered by `path` already. The ordering becomes that one key (the interface ends every
 * ordering with `id`, so pages stay stable); the filter and selection are kept.
 */
export function toggleOrder(query: string, path: string): string {
  const now = currentOrder(query);
  const descending = now?.path === path && !now.descending;
  return joinQuery({ ...splitQuery(query), orderby: `orderby ${path}${descending ? ' desc' : ''}` });
}

export const PAGE_SIZES = [10, 20, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 20;

/** The page size of the URL when it is one of PAGE_SIZES (the interface's limit is 1–100), else the default. */
export function pageSize(raw: string | null): number {
  const n = Number(raw);
  return (PAGE_SIZES as readonly number[]).includes(n) ? n : DEFAULT_PAGE_SIZE;
}

/** The offsets of the previous and next pages, undefined where there is none. */
export function pageOffsets(offset: number, size: number, hasNext: boolean): { previous?: number; next?: number } {
  return { previous: offset > 0 ? Math.max(0, offset - size) : undefined, next: hasNext ? offset + size : undefined };
}
