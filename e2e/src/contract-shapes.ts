import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { loadContract, type ContractName } from '@platform/shared';

export type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
type MediaTypes = Record<string, { schema?: object }>;
type Operation = { responses?: Record<string, { content?: MediaTypes }> };

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/** What an openapi-fetch call returns, as far as the checks below read it. */
export type ClientResult = { data?: unknown; error?: unknown; response: Response };

export type ContractShapes = Awaited<ReturnType<typeof contractShapes>>;

/**
 * Checks bodies against the response schemas of a contract, so that a test asserts the documented
 * shape of every answer it reads mechanically, not only through the fields it picks. The contract
 * is the dereferenced OpenAPI 3.1 document the service routes by; its schemas are JSON Schema
 * 2020-12, hence Ajv2020.
 */
export async function contractShapes(name: ContractName) {
  const contract = await loadContract(name);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv as never);
  const compiled = new Map<string, ValidateFunction>();

  const validator = (path: string, method: Method, status: number, mediaType: string): ValidateFunction => {
    const key = `${method.toUpperCase()} ${path} ${status} ${mediaType}`;
    let validate = compiled.get(key);
    if (!validate) {
      const operation = (contract.paths?.[path] as Record<string, Operation> | undefined)?.[method];
      const schema = operation?.responses?.[String(status)]?.content?.[mediaType]?.schema;
      assert.ok(schema, `the contract documents no ${mediaType} body for ${key}`);
      validate = ajv.compile(schema);
      compiled.set(key, validate);
    }
    return validate;
  };

  /**
   * What is wrong with an answer by the contract, or undefined when it is as documented: its status
   * and media type must be listed for the operation, and a JSON body must match the schema there.
   */
  const violation = (path: string, method: Method, status: number, mediaType: string, body: unknown): string | undefined => {
    const key = `${method.toUpperCase()} ${path} ${status}`;
    const operation = (contract.paths?.[path] as Record<string, Operation> | undefined)?.[method];
    if (!operation) return `${key}: the contract has no such operation`;
    const response = operation.responses?.[String(status)];
    if (!response) return `${key}: the contract lists no ${status} answer for this operation`;
    if (body === undefined)
      return response.content ? `${key}: answered no body where the contract documents ${Object.keys(response.content).join(', ')}` : undefined;
    const media = response.content?.[mediaType];
    if (!media) return `${key}: answered ${mediaType}, the contract documents ${Object.keys(response.content ?? {}).join(', ') || 'no body'}`;
    if (!isJson(mediaType) || !media.schema) return undefined;
    const validate = validator(path, method, status, mediaType);
    if (validate(body)) return undefined;
    return `${key} ${mediaType}: ${ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' })}\n${JSON.stringify(body).slice(0, 600)}`;
  };

  /** Asserts that `body` is what the contract documents for this operation and status. */
  const assertBody = (path: string, method: Method, status: number, body: unknown, mediaType = 'application/json'): void => {
    const validate = validator(path, method, status, mediaType);
    if (!validate(body)) {
      assert.fail(
        `${method.toUpperCase()} ${path} ${status}: ${ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' })}\n${JSON.stringify(body).slice(0, 600)}`,
      );
    }
  };

  /** Asserts that `value` matches a schema of the contract (one compiled validator per schema object). */
  const assertSchema = (schema: object, value: unknown): void => {
    const validate = ajv.compile(schema);
    if (!validate(value)) assert.fail(`${ajv.errorsText(validate.errors, { dataVar: 'value', separator: '; ' })}\n${JSON.stringify(value).slice(0, 600)}`);
  };

  return {
    contract,
    assertSchema,
    violation,
    /** A named schema of `components.schemas` (dereferenced). */
    schema: (schemaName: string) => contract.components?.schemas?.[schemaName] as Record<string, unknown>,
    assertBody,
    /** Asserts a successful answer: its status, and its body against the contract's schema. Returns the body. */
    ok<T>(path: string, method: Method, result: { data?: T; error?: unknown; response: Response }, status = 200): T {
      assert.equal(result.response.status, status, `${method.toUpperCase()} ${path}: ${JSON.stringify(result.error ?? null).slice(0, 600)}`);
      assertBody(path, method, status, result.data);
      return result.data as T;
    },
    /**
     * Asserts a problem+json answer: status, Content-Type, `code`, and the body against the
     * contract's schema for that status. Returns the problem.
     */
    problem(path: string, method: Method, result: ClientResult, status: number, code: string) {
      assert.equal(
        result.response.status,
        status,
        `${method.toUpperCase()} ${path}: expected ${status} ${code}, got ${JSON.stringify(result.error ?? result.data ?? null).slice(0, 600)}`,
      );
      assert.match(result.response.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assertBody(path, method, status, result.error, 'application/problem+json');
      const problem = result.error as { status: number; code: string; detail: string; errors?: { loc: (string | number)[]; msg: string; type: string }[] };
      assert.equal(problem.status, status);
      assert.equal(problem.code, code);
      return problem;
    },
  };
}
