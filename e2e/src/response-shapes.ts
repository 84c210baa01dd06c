import type { Middleware } from 'openapi-fetch';
import type { ContractName } from '@platform/shared';
import { contractShapes, type ContractShapes, type Method } from './contract-shapes.ts';

/** One loaded contract and its compiled validators per contract, shared by every client of a test run. */
const loaded = new Map<ContractName, Promise<ContractShapes>>();
const shapesOf = (name: ContractName) => {
  let shapes = loaded.get(name);
  if (!shapes) loaded.set(name, (shapes = contractShapes(name)));
  return shapes;
};

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/**
 * A client middleware that checks every answer against the contract's response schema for its
 * operation, status and media type, so that a test exercising an operation also proves the shape
 * of every answer it gets, fields it does not read included. A violation rejects the call with a
 * message naming the operation, the status and what is wrong.
 */
export function responseShapes(name: ContractName): Middleware {
  return {
    async onResponse({ request, response, schemaPath }) {
      const text = await response.clone().text();
      const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
      let body: unknown;
      if (text !== '') {
        try {
          body = isJson(mediaType) ? JSON.parse(text) : text;
        } catch {
          throw new Error(`${request.method} ${schemaPath} ${response.status}: the ${mediaType} body is not JSON: ${text.slice(0, 300)}`);
        }
      }
      const problem = (await shapesOf(name)).violation(schemaPath, request.method.toLowerCase() as Method, response.status, mediaType, body);
      if (problem) throw new Error(`answer outside the ${name} contract: ${problem}`);
      return undefined;
    },
  };
}
