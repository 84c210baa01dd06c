import createClient from 'openapi-fetch';
import type { paths } from '@platform/api-types/data';
import { plainTransport, type CommonOptions, type JsonMedia } from './options.ts';
import { throwProblems } from './throw-problems.ts';

export type DataClientOptions = CommonOptions & {
  /** The tenant (`X-TENANT-ID`) and one of its API keys (`X-Api-Key`). */
  tenantId: string;
  apiKey: string;
};

/**
 * A typed client of the data interface (contracts/data.openapi.yaml): the tenant's headers on every
 * call, an Idempotency-Key on every POST, the same retries and problem exceptions as the management
 * client (docs/adr/0034-client-package.md).
 */
export function createDataClient(options: DataClientOptions) {
  const client = createClient<paths, JsonMedia>({
    baseUrl: options.baseUrl,
    headers: { ...options.headers, 'x-tenant-id': options.tenantId, 'x-api-key': options.apiKey },
    fetch: plainTransport(options),
  });
  if (options.problems !== 'return') client.use(throwProblems);
  if (options.middleware?.length) client.use(...options.middleware);
  return client;
}

export type DataClient = ReturnType<typeof createDataClient>;
