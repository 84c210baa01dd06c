import { readFileSync } from 'node:fs';
import peggy from 'peggy';
import { InvalidExpression, type Loc } from '../domain/errors.ts';
import type { Filter } from './ast.ts';

// Generated from the grammar when the module loads (as the management query language does), so
// there is no generated parser file to keep in step with the grammar.
const parser = peggy.generate(readFileSync(new URL('./grammar.peggy', import.meta.url), 'utf8'));

type PeggyError = {
  location?: { start: { offset: number } };
  expected?: { type: string; description?: string; text?: string }[] | null;
  found?: string | null;
};

/**
 * Parses a filter into its AST, or throws an InvalidExpression at `loc` naming the 0-based
 * character position where the text stops making sense and what was expected there.
 */
export function parseFilter(text: string, loc: Loc): Filter {
  try {
    return parser.parse(text) as Filter;
  } catch (error) {
    const e = error as PeggyError;
    if (!e.location) throw error;
    const position = e.location.start.offset;
    const expected = [
      ...new Set(
        (e.expected ?? [])
          .map((x) => (x.type === 'end' ? 'end of filter' : (x.description ?? (x.text !== undefined ? `"${x.text}"` : x.type))))
          .filter((d) => d !== 'whitespace'),
      ),
    ];
    const found = e.found === null || e.found === undefined ? 'end of filter' : `"${e.found}"`;
    throw new InvalidExpression(loc, position, `expected ${orList(expected)}, found ${found}`, text);
  }
}

const orList = (items: string[]) => (items.length <= 1 ? (items[0] ?? 'something else') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);
