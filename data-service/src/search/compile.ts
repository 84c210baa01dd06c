import { InvalidExpression, UnknownValue, type Loc } from '../domain/errors.ts';
import type { SqlParams } from '../store/params.ts';
import type { Filter, FilterValue } from './ast.ts';
import { allowed, FIELDS, type FieldDef, type FieldKind } from './fields.ts';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * SQL of a parsed filter over the fields of `kind`. Every value becomes a bound parameter with
 * an explicit type, so the filter text never reaches SQL. A field that is not of `kind` is an
 * UnknownValue listing the allowed names; a value of the wrong type an InvalidExpression at its
 * position. A null value fails every comparison (SQL's null logic; the grammar has no negation).
 */
export function compileFilter(filter: Filter, kind: FieldKind, params: SqlParams, loc: Loc, source: string): string {
  const fields = FIELDS[kind];
  const walk = (f: Filter): string => {
    if (f.type !== 'compare') return `(${f.items.map(walk).join(f.type === 'and' ? ' and ' : ' or ')})`;
    const def = fields.get(f.field);
    if (!def) throw new UnknownValue(loc, `unknown ${kind} field '${f.field}' at position ${f.fieldAt}; allowed: ${allowed(kind)}`);
    const op = f.op === '==' ? '=' : f.op;
    return `(${def.sql} ${op} ${value(f.field, def, f.value)})`;
  };
  const value = (field: string, def: FieldDef, v: FilterValue): string => {
    const fail = (message: string) => new InvalidExpression(loc, v.at, message, source);
    if (def.type === 'number') {
      if (v.kind !== 'number') throw fail(`expected a number for ${field}`);
      const n = Number(v.text);
      if (!Number.isFinite(n)) throw fail(`number out of range for ${field}`);
      return `${params.bind(n)}::double`;
    }
    if (v.kind !== 'string') throw fail(`expected a quoted ${def.type === 'date' ? "date ('YYYY-MM-DD')" : 'string'} for ${field}`);
    if (def.type === 'text') return `${params.bind(v.value)}::varchar`;
    if (!isDate(v.value)) throw fail(`expected a date 'YYYY-MM-DD' for ${field}`);
    return `${params.bind(v.value)}::date`;
  };
  return walk(filter);
}

/** The field names a parsed filter compares, each once, in order of appearance. */
export function filterFields(filter: Filter): string[] {
  const names = new Set<string>();
  const walk = (f: Filter): void => {
    if (f.type === 'compare') names.add(f.field);
    else f.items.forEach(walk);
  };
  walk(filter);
  return [...names];
}

function isDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}
