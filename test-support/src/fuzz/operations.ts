import type { OpenAPIV3_1 } from 'openapi-types';

// The operations of a contract as the fuzz reads them: their parameters and body schemas.

// A JSON Schema node of a dereferenced contract; only the keywords the generator reads.
export type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  patternProperties?: Record<string, Schema>;
  propertyNames?: Schema;
  items?: Schema;
  prefixItems?: Schema[];
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  examples?: unknown[];
  example?: unknown;
};

type Parameter = { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema?: Schema };

export type FuzzOperation = {
  operationId: string;
  method: string;
  /** The contract's path template, `/users/{user_id}`. */
  path: string;
  parameters: Parameter[];
  /** The first media type of the request body, its schema, and the contract's example under `example`. */
  body?: { mediaType: string; schema: Schema };
};

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/** Every operation of a dereferenced OpenAPI document. */
export function operationsOf(doc: OpenAPIV3_1.Document): FuzzOperation[] {
  const out: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item?.[method] as OpenAPIV3_1.OperationObject | undefined;
      if (!op?.operationId) continue;
      const parameters = [...((item?.parameters ?? []) as Parameter[]), ...((op.parameters ?? []) as Parameter[])];
      const requestBody = op.requestBody as OpenAPIV3_1.RequestBodyObject | undefined;
      const [mediaType, media] = Object.entries(requestBody?.content ?? {})[0] ?? [];
      out.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        parameters,
        body: mediaType
          ? { mediaType, schema: { ...(media?.schema as Schema), ...(media?.example !== undefined ? { example: media.example } : {}) } }
          : undefined,
      });
    }
  }
  return out;
}
