import type { Path } from './ast.ts';

/** What a path holds, from the contract's schema of the entity. */
export type FieldType = 'string' | 'number' | 'boolean' | 'date-time' | 'date' | 'array' | 'object';

type Schema = {
  type?: string | string[];
  format?: string;
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  propertyNames?: { pattern?: string };
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  items?: Schema;
};

/** One schema for all branches of allOf, and the first non-null branch of oneOf/anyOf. */
function flatten(schema: Schema): Schema {
  if (schema.allOf) {
    return schema.allOf
      .map(flatten)
      .reduce<Schema>((acc, part) => ({ ...acc, ...part, properties: { ...acc.properties, ...part.properties } }), { ...schema, allOf: undefined });
  }
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) {
    const real = branches.map(flatten).find((b) => b.type !== 'null');
    if (real) return { ...real, ...schema, oneOf: undefined, anyOf: undefined, type: real.type, properties: real.properties, format: real.format };
  }
  return schema;
}

function kindOf(schema: Schema): FieldType | undefined {
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t) => t && t !== 'null');
  if (types.includes('number') || types.includes('integer')) return 'number';
  if (types.includes('boolean')) return 'boolean';
  if (types.includes('array')) return 'array';
  if (types.includes('object') || schema.properties || schema.patternProperties) return 'object';
  if (types.includes('string')) return schema.format === 'date-time' ? 'date-time' : schema.format === 'date' ? 'date' : 'string';
  return undefined;
}

const patterns = new Map<string, RegExp>();
/** Whether `name` matches a pattern of the contract (JSON Schema patterns are unicode regular expressions, each compiled once). */
function matches(pattern: string, name: string): boolean {
  let re = patterns.get(pattern);
  if (!re) patterns.set(pattern, (re = new RegExp(pattern, 'u')));
  return re.test(name);
}

/**
 * The schema of the key `name` of an object: a declared property (an own key of `properties`, so
 * that `constructor` or `__proto__` is not found on Object.prototype), else one of the keys the
 * schema admits by pattern or as additional properties, if `propertyNames` lets `name` be a key.
 */
function member(schema: Schema, name: string): Schema | undefined {
  if (schema.properties && Object.hasOwn(schema.properties, name)) return schema.properties[name];
  if (schema.propertyNames?.pattern !== undefined && !matches(schema.propertyNames.pattern, name)) return undefined;
  const byPattern = Object.entries(schema.patternProperties ?? {}).find(([pattern]) => matches(pattern, name));
  if (byPattern) return byPattern[1];
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

/** The type at `path` in an entity's read schema, or undefined when the path is not in it. */
export function fieldType(root: Schema, path: Path): FieldType | undefined {
  let schema: Schema | undefined = flatten(root);
  for (const name of path) {
    if (!schema) return undefined;
    const next = member(schema, name);
    schema = next ? flatten(next) : undefined;
  }
  return schema ? kindOf(schema) : undefined;
}
