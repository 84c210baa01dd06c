import type { Path } from './ast.ts';

/** What a path holds, from the contract's schema of the entity. */
export type FieldType = 'string' | 'number' | 'boolean' | 'date-time' | 'date' | 'array' | 'object';

type Schema = {
  type?: string | string[];
  format?: string;
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
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

/** The type at `path` in an entity's read schema, or undefined when the path is not in it. */
export function fieldType(root: Schema, path: Path): FieldType | undefined {
  let schema: Schema | undefined = flatten(root);
  for (const name of path) {
    if (!schema) return undefined;
    const next: Schema | undefined =
      schema.properties?.[name] ??
      Object.entries(schema.patternProperties ?? {}).find(([pattern]) => new RegExp(pattern).test(name))?.[1] ??
      (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    schema = next ? flatten(next) : undefined;
  }
  return schema ? kindOf(schema) : undefined;
}
