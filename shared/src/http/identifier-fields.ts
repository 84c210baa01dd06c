import type { ValidationIssue } from '../problem.ts';
import { checkIdentifier } from '../identifiers.ts';

/** A request refused for its identifiers is answered with the first ones, as storable.ts does. */
const MAX_ISSUES = 20;

/**
 * Puts every string under one of `names` (at any depth of the body, e.g. `external_id` and
 * `data.external_id`) into its stored form in place, and lists those that are refused with their
 * loc (docs/adr/0040-identifiers-as-people-read-them.md). The body is already known to be storable
 * and nested at most MAX_NESTING levels.
 */
export function normaliseIdentifierFields(body: unknown, names: ReadonlySet<string>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const visit = (value: unknown, loc: (string | number)[]): void => {
    if (issues.length >= MAX_ISSUES || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => visit(item, [...loc, i]));
      return;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const child = record[key];
      if (typeof child === 'string' && names.has(key)) {
        const checked = checkIdentifier(child);
        if (checked.ok) record[key] = checked.value;
        else if (issues.length < MAX_ISSUES) issues.push({ loc: [...loc, key], msg: checked.msg, type: checked.type });
      } else visit(child, [...loc, key]);
    }
  };
  visit(body, ['body']);
  return issues;
}
