import { readFileSync } from 'node:fs';
import peggy from 'peggy';
import type { Condition, Query, Value } from './ast.ts';

const grammar = readFileSync(new URL('./grammar.peggy', import.meta.url), 'utf8');
const parser = peggy.generate(grammar);

/** A query that does not parse; `position` is the 0-based character offset of the problem. */
export class QuerySyntaxError extends Error {
  constructor(
    readonly position: number,
    message: string,
  ) {
    super(message);
  }
}

/** Parses a query expression into its AST, or throws a QuerySyntaxError naming the position. */
export function parseQuery(text: string): Query {
  try {
    return parser.parse(text) as Query;
  } catch (error) {
    const e = error as { location?: { start: { offset: number } }; expected?: { description?: string; text?: string; type: string }[]; found?: string | null };
    const position = e.location?.start.offset ?? 0;
    const expected = [...new Set((e.expected ?? []).map((x) => (x.type === 'end' ? 'end of query' : (x.description ?? (x.text ? `"${x.text}"` : x.type)))))];
    const found = e.found === null || e.found === undefined ? 'end of query' : `"${e.found}"`;
    throw new QuerySyntaxError(position, `Invalid query at position ${position}: expected ${expected.join(', ') || 'something else'}, found ${found}.`);
  }
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

export function printValue(v: Value): string {
  if (v.kind === 'string') return quote(v.value);
  if (v.kind === 'number') return v.text;
  if (v.kind === 'boolean') return String(v.value);
  return 'null';
}

function printCondition(c: Condition): string {
  switch (c.type) {
    case 'and':
    case 'or':
      return c.items.map((item) => (item.type === 'and' || item.type === 'or' ? `(${printCondition(item)})` : printCondition(item))).join(` ${c.type} `);
    case 'compare':
      return `${c.path.join('.')} ${c.op} ${printValue(c.value)}`;
    case 'in':
      return `${c.path.join('.')} in [${c.values.map(printValue).join(', ')}]`;
    case 'range':
      return `${c.path.join('.')} in [${printValue(c.from)} to ${printValue(c.to)}]`;
  }
}

/** The text of an AST; parsing it gives the same AST back. */
export function printQuery(q: Query): string {
  const parts: string[] = [];
  if (q.where) parts.push(printCondition(q.where));
  if (q.orderBy.length) parts.push(`orderby ${q.orderBy.map((k) => `${k.path.join('.')} ${k.direction}`).join(', ')}`);
  if (q.select) parts.push(`select ${q.select.map((p) => p.path.join('.')).join(', ')}`);
  return parts.join(' ');
}
