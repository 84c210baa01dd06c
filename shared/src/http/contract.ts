import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
import type { OpenAPIV3_1 } from 'openapi-types';

export type ContractName = 'management' | 'data';

export const contractPath = (name: ContractName): string => fileURLToPath(new URL(`../../../contracts/${name}.openapi.yaml`, import.meta.url));

/**
 * Reads a contract, validates it as OpenAPI 3.1 and returns it fully dereferenced, so that
 * openapi-backend can start in quick mode (its own 3.1 initialisation can leave routes unmatched).
 */
export async function loadContract(name: ContractName): Promise<OpenAPIV3_1.Document> {
  const document = parse(await readFile(contractPath(name), 'utf8')) as OpenAPIV3_1.Document;
  await SwaggerParser.validate(structuredClone(document) as never);
  return (await SwaggerParser.dereference(document as never)) as OpenAPIV3_1.Document;
}
