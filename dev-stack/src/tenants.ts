// Tenants and credentials as the platform team's CLI makes them, for the tests and benchmarks of either service.
import type { Knex } from 'knex';
import { newUlid } from '@platform/shared';
import { createAccessKey, createApiKey, createTenant } from '@platform/management-service/admin/provisioning';

export { createAccessKey, createApiKey, createTenant, setTenantRateLimits } from '@platform/management-service/admin/provisioning';
export { revokeApiKey } from '@platform/management-service/store/credentials';

export type TenantCredentials = { tenantId: string; accessKeyId: string; secret: string; apiKey: string };

/** A tenant with one access key (management service) and one API key (data service). */
export async function createTenantWithKeys(
  db: Knex,
  id = `t-${newUlid().toLowerCase()}`,
  options: { brokerIntegration?: 'CLIENT' | 'SERVICE' } = {},
): Promise<TenantCredentials> {
  await createTenant(db, { id, brokerIntegration: options.brokerIntegration });
  const access = await createAccessKey(db, id);
  const api = await createApiKey(db, id);
  return { tenantId: id, accessKeyId: access.access_key_id, secret: access.secret_access_key, apiKey: api.api_key };
}
