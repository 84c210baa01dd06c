import createClient from 'openapi-fetch';
import type { paths as ManagementPaths } from '@platform/shared/generated/management';
import type { paths as DataPaths } from '@platform/shared/generated/data';
import { responseShapes } from './response-shapes.ts';

/**
 * Typed clients generated from the contracts (openapi-fetch over the types of `npm run generate`).
 * Every answer of the management client is checked against the contract's response schema: a call
 * whose answer the contract does not document rejects (see response-shapes.ts).
 */
export const managementClient = (baseUrl: string, token?: string) => {
  const client = createClient<ManagementPaths>({ baseUrl, headers: token ? { authorization: `Bearer ${token}` } : {} });
  client.use(responseShapes('management'));
  return client;
};

export const dataClient = (baseUrl: string, tenantId: string, apiKey: string) =>
  createClient<DataPaths>({ baseUrl, headers: { 'x-tenant-id': tenantId, 'x-api-key': apiKey } });
