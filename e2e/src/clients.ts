import createClient from 'openapi-fetch';
import type { paths as ManagementPaths } from '@platform/shared/generated/management';
import type { paths as DataPaths } from '@platform/shared/generated/data';

/** Typed clients generated from the contracts (openapi-fetch over the types of `npm run generate`). */
export const managementClient = (baseUrl: string, token?: string) =>
  createClient<ManagementPaths>({ baseUrl, headers: token ? { authorization: `Bearer ${token}` } : {} });

export const dataClient = (baseUrl: string, tenantId: string, apiKey: string) =>
  createClient<DataPaths>({ baseUrl, headers: { 'x-tenant-id': tenantId, 'x-api-key': apiKey } });
