import { createDataClient, createManagementClient } from '@platform/client';
import { responseShapes } from './response-shapes.ts';

/**
 * The tests' clients are the integrators' package (`@platform/client`, docs/adr/0034-client-package.md)
 * with refusals returned rather than thrown (`problems: 'return'`), so that a test reads their
 * status and code. Every answer of the management client is also checked against the contract's
 * response schema: a call whose answer the contract does not document rejects (see response-shapes.ts).
 */
export const managementClient = (baseUrl: string, token?: string) =>
  createManagementClient({ baseUrl, token, problems: 'return', middleware: [responseShapes('management')] });

/** A machine client that logs in with its tenant's access key and renews its token by itself. */
export const machineClient = (baseUrl: string, tenant: { accessKeyId: string; secret: string }) =>
  createManagementClient({
    baseUrl,
    credentials: { accessKeyId: tenant.accessKeyId, secretAccessKey: tenant.secret },
    problems: 'return',
    middleware: [responseShapes('management')],
  });

export const dataClient = (baseUrl: string, tenantId: string, apiKey: string) => createDataClient({ baseUrl, tenantId, apiKey, problems: 'return' });
