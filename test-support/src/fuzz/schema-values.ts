import fc from 'fast-check';
import type { Schema } from './operations.ts';
import { hostileValue, RawJson } from './values.ts';

// Values a contract's schemas accept, and the same with one node made hostile or a key added.

/** Ids the fuzz may use for references: the letter of the id (`U`, `P`, …) to ids that exist. */
export type KnownIds = Record<string, string[]>;

const ID_PATTERN = /^\^([A-Z])\[0-9A-HJKMNP-TV-Z\]\{26\}\$$/;

export function stringOf(schema: Schema, ids: KnownIds): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.max(min, Math.min(schema.maxLength ?? 24, 24));
  if (schema.format === 'date-time')
    return fc.date({ min: new Date('1990-01-01'), max: new Date('2080-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (schema.format === 'date')
    return fc.date({ min: new Date('1990-01-01'), max: new Date('2080-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.format === 'uri' || schema.format === 'uri-reference') return fc.webUrl();
  if (schema.pattern) {
    const letter = ID_PATTERN.exec(schema.pattern)?.[1];
    let matching: fc.Arbitrary<string>;
    try {
      matching = fc.stringMatching(new RegExp(schema.pattern, 'u'));
    } catch {
      matching = fc.string({ minLength: min, maxLength: max });
    }
    const bounded = matching.filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Infinity));
    const known = letter ? ids[letter] : undefined;
    return known?.length ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: bounded }) : bounded;
  }
  return fc.string({ minLength: min, maxLength: max });
}

function numberOf(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const lo = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 1e-9) : -1e6);
  const hi = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 1e-9) : 1e6);
  if (integer) return fc.integer({ min: Math.ceil(Math.max(lo, -1e9)), max: Math.floor(Math.min(hi, 1e9)) });
  return fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true });
}

function merged(schemas: Schema[]): Schema {
  return schemas.reduce<Schema>(
    (acc, s) => ({ ...acc, ...s, properties: { ...acc.properties, ...s.properties }, required: [...(acc.required ?? []), ...(s.required ?? [])] }),
    {},
  );
}

const ANY_ID = /^([A-Z])[0-9A-HJKMNP-TV-Z]{26}$/;

/** A contract's example with its ids replaced by ids that exist (of the same letter), where the fuzz knows some. */
function withKnownIds(example: unknown, ids: KnownIds): unknown {
  if (typeof example === 'string') return ids[ANY_ID.exec(example)?.[1] ?? '']?.[0] ?? example;
  if (Array.isArray(example)) return example.map((e) => withKnownIds(e, ids));
  if (example !== null && typeof example === 'object') return Object.fromEntries(Object.entries(example).map(([k, v]) => [k, withKnownIds(v, ids)]));
  return example;
}

/**
 * Values a schema accepts, most of the time: its examples (with ids that exist), and values built
 * from its keywords (patterns and bounds are honoured where fast-check can).
 */
export function schemaValue(schema: Schema, ids: KnownIds, depth = 0): fc.Arbitrary<unknown> {
  const examples = [...(schema.example !== undefined ? [schema.example] : []), ...(schema.examples ?? [])];
  const built = builtValue(schema, ids, depth);
  return examples.length > 0
    ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...examples.map((e) => withKnownIds(e, ids))) }, { weight: 1, arbitrary: built })
    : built;
}

function builtValue(schema: Schema, ids: KnownIds, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.allOf) return schemaValue(merged(schema.allOf.map((s) => ({ ...s }))), ids, depth);
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) return fc.oneof(...branches.map((b) => schemaValue({ ...schema, oneOf: undefined, anyOf: undefined, ...b }, ids, depth)));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : schema.properties ? ['object'] : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => schemaValue({ ...schema, type: t }, ids, depth)));
  switch (types[0]) {
    case 'string':
      return stringOf(schema, ids);
    case 'integer':
      return numberOf(schema, true);
    case 'number':
      return numberOf(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      if (schema.prefixItems) return fc.tuple(...schema.prefixItems.map((s) => schemaValue(s, ids, depth + 1)));
      const min = schema.minItems ?? 0;
      const max = Math.max(min, Math.min(schema.maxItems ?? 4, 4));
      return fc.array(schema.items ? schemaValue(schema.items, ids, depth + 1) : fc.jsonValue({ maxDepth: 2 }), { minLength: min, maxLength: max });
    }
    case 'object':
      return objectOf(schema, ids, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function objectOf(schema: Schema, ids: KnownIds, depth: number): fc.Arbitrary<unknown> {
  const required = new Set(schema.required ?? []);
  const props = Object.entries(schema.properties ?? {}).filter(([name]) => depth < 6 || required.has(name));
  const record = fc.record(Object.fromEntries(props.map(([name, s]) => [name, schemaValue(s, ids, depth + 1)])), {
    requiredKeys: props.map(([name]) => name).filter((name) => required.has(name)),
  });
  const extraSchema = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : Object.values(schema.patternProperties ?? {})[0];
  if (!extraSchema || depth >= 6) return record;
  const keys = schema.propertyNames
    ? stringOf(schema.propertyNames, ids)
    : schema.patternProperties
      ? stringOf({ pattern: Object.keys(schema.patternProperties)[0] }, ids)
      : fc.string({ minLength: 1, maxLength: 12 });
  const extra = fc.dictionary(keys, schemaValue(extraSchema, ids, depth + 1), { maxKeys: 3 });
  return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...(r as object) }));
}

/** How many nodes (values at any depth) a JSON value has. */
function countNodes(value: unknown): number {
  if (value !== null && typeof value === 'object' && !(value instanceof RawJson)) {
    return 1 + Object.values(value).reduce<number>((n, v) => n + countNodes(v), 0);
  }
  return 1;
}

/** A copy of `value` whose `index`-th node (depth first, the root is 0) is `replacement`. */
export function replaceNode(value: unknown, index: number, replacement: unknown): unknown {
  let seen = -1;
  const walk = (v: unknown): unknown => {
    seen++;
    if (seen === index) return replacement;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && !(v instanceof RawJson)) return Object.fromEntries(Object.entries(v).map(([k, c]) => [k, walk(c)]));
    return v;
  };
  return walk(value);
}

/** A value of the schema with one node replaced by a hostile value, a key added, or as generated. */
export function hostileVariant(schema: Schema, ids: KnownIds): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      schemaValue(schema, ids),
      fc.nat(),
      fc.integer({ min: 0, max: 9 }),
      hostileValue,
      fc.constantFrom('unknown_field', '\u0000', '\ud800', 'x'.repeat(200), '__proto__', 'constructor', 'hasOwnProperty'),
    )
    .map(([value, at, mode, hostile, key]) => {
      if (mode <= 1) return value;
      if (mode <= 7) return replaceNode(value, at % countNodes(value), hostile);
      if (mode === 8 && value !== null && typeof value === 'object' && !Array.isArray(value)) return { ...value, [key]: hostile };
      return hostile;
    });
}
