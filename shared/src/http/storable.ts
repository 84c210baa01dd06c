import type { ValidationIssue } from '../problem.ts';

/** Deeper than any body of the contracts; Postgres and JSON.stringify recurse per level. */
export const MAX_NESTING = 64;
/** A request full of bad strings is answered with the first ones, not with a list as long as the body. */
const MAX_ISSUES = 20;

const NUL = '\u0000';
// With the u flag a paired surrogate is one code point, so this matches only an unpaired one.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Why a string cannot be stored or compared as text, or undefined when it can: Postgres text
 * cannot hold NUL, and an unpaired UTF-16 surrogate (a JSON escape such as "\ud800") is not
 * Unicode text, so it has no UTF-8 form.
 */
export function unstorableText(s: string): string | undefined {
  const nul = s.indexOf(NUL);
  if (nul >= 0) return `must not contain the NUL character (U+0000), found at character ${nul}`;
  const at = s.search(LONE_SURROGATE);
  if (at < 0) return undefined;
  return `must not contain an unpaired surrogate (U+D800 to U+DFFF), found at character ${at}`;
}

/** `named`: the value sits under a field name, which is checked too. */
const isPlainObject = (value: unknown): value is object => {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};

type Pending = { value: unknown; loc: (string | number)[]; depth: number; named: boolean };

/**
 * Every string (and field name) of a parsed request that no store can hold, every number beyond
 * a double, and every value nested deeper than MAX_NESTING, with the loc of the value (`['body', 'first_name']`,
 * `['query', 'query']`). Walks with its own stack, so that a body nested a million levels deep
 * is refused rather than overflowing the call stack.
 */
export function unstorableIssues(parts: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const stack: Pending[] = Object.entries(parts).map(([part, value]) => ({ value, loc: [part], depth: 0, named: false }));
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const { value, loc, depth, named } = stack.pop()!;
    const name = named ? unstorableText(String(loc[loc.length - 1])) : undefined;
    if (name) {
      issues.push({ loc, msg: `(the field name) ${name}`, type: 'text' });
      continue;
    }
    if (typeof value === 'string') {
      const msg = unstorableText(value);
      if (msg) issues.push({ loc, msg, type: 'text' });
      continue;
    }
    // JSON.parse reads 1e999 as Infinity, which the contracts' number types would let through.
    if (typeof value === 'number' && !Number.isFinite(value)) {
      issues.push({ loc, msg: 'is beyond the range of numbers (±1.8e308)', type: 'number' });
      continue;
    }
    // Parsed JSON, query and path parameters only: a Buffer body is the operation's to read.
    if (!Array.isArray(value) && !isPlainObject(value)) continue;
    if (depth > MAX_NESTING) {
      issues.push({ loc, msg: `is nested more than ${MAX_NESTING} levels deep`, type: 'depth' });
      continue;
    }
    const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v] as [number, unknown]) : Object.entries(value);
    // Pushed in reverse so that issues come out in document order.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      stack.push({ value: child, loc: [...loc, key], depth: depth + 1, named: typeof key === 'string' });
    }
  }
  return issues;
}
