import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { components } from '@platform/api-types/events';

type Schemas = components['schemas'];

/** Checks a message read from NATS against its schema in contracts/events.asyncapi.yaml. */
export type MessageCheck<T> = (value: unknown) => { ok: true; message: T } | { ok: false; errors: string };

/**
 * A checker for messages of one schema of the AsyncAPI contract. Messages between the services
 * cross a process boundary: a consumer checks them before acting, so a malformed one is refused
 * with a reason instead of failing half-way (and is never redelivered forever).
 */
export function messageCheck<N extends keyof Schemas>(name: N): MessageCheck<Schemas[N]> {
  const path = fileURLToPath(new URL('../../contracts/events.asyncapi.yaml', import.meta.url));
  const document = parse(readFileSync(path, 'utf8')) as { components: { schemas: Record<string, object> } };
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const [schemaName, schema] of Object.entries(document.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${schemaName}`);
  const validate = ajv.compile({ $ref: `#/components/schemas/${name}` });
  return (value) => (validate(value) ? { ok: true, message: value as Schemas[N] } : { ok: false, errors: ajv.errorsText(validate.errors, { dataVar: name }) });
}
