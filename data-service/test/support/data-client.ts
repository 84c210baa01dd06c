import { call } from '@platform/test-support/http';
import type { TestTenant } from '@platform/test-support/platform';

/** Calls of the data interface as one tenant: JSON answers through `call`, Arrow answers as bytes. */
export function dataClient(dataUrl: string, tenant: TestTenant) {
  const auth = { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey };
  return {
    post: (path: string, body: unknown, headers: Record<string, string> = {}) =>
      call(`${dataUrl}${path}`, { method: 'POST', body, headers: { ...auth, ...headers } }),
    postText: (path: string, text: string, contentType: string) =>
      call(`${dataUrl}${path}`, { method: 'POST', rawBody: text, headers: { ...auth, 'content-type': contentType } }),
    get: (path: string, headers: Record<string, string> = {}) => call(`${dataUrl}${path}`, { headers: { ...auth, ...headers } }),
    /** The raw answer, for Arrow: status, Content-Type and bytes. */
    bytes: async (path: string, accept: string, body?: unknown) => {
      const res = await fetch(`${dataUrl}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { ...auth, accept, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, contentType: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
    },
  };
}
