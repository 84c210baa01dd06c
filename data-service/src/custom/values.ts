import { InvalidValue, type Loc } from '../domain/errors.ts';
import { fieldOfKey } from '../domain/reference-fields.ts';
import type { CustomValue, CustomValues } from './store.ts';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const isDate = (text: string): boolean => {
  const m = DATE.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().startsWith(text);
};

/**
 * A custom key equal to a reference field's lower-case name overrides that field in reference
 * answers, whose JSON and Arrow types are fixed: so such a key takes a number for a numeric field
 * and a YYYY-MM-DD date for PRICE_DATE (null always). A text field takes any value, read as its
 * text. Returns why `value` cannot be stored under `key`, or undefined when it can.
 */
export function overrideProblem(key: string, value: CustomValue): string | undefined {
  const field = fieldOfKey(key);
  if (!field || value === null) return undefined;
  if (field.kind === 'number' && typeof value !== 'number') return `'${key}' overrides the reference field ${field.name}: give a number or null`;
  if (field.kind === 'date' && !(typeof value === 'string' && isDate(value)))
    return `'${key}' overrides the reference field ${field.name}: give a date as YYYY-MM-DD or null`;
  return undefined;
}

/**
 * Collects values to write, later entries winning over earlier ones for the same instrument and
 * key. A value that may not override its reference field is a 422 at `loc(entry, key)`.
 */
export function collectValues<E>(
  entries: Iterable<E>,
  read: (entry: E) => { isin: string; values: Iterable<[string, CustomValue]> },
  loc: (index: number, key: string) => Loc,
): CustomValues {
  const collected: CustomValues = new Map();
  let index = 0;
  for (const entry of entries) {
    const { isin, values } = read(entry);
    let byKey = collected.get(isin);
    for (const [key, value] of values) {
      const problem = overrideProblem(key, value);
      if (problem) throw new InvalidValue(loc(index, key), problem);
      if (!byKey) collected.set(isin, (byKey = new Map()));
      byKey.set(key, value);
    }
    index++;
  }
  return collected;
}
