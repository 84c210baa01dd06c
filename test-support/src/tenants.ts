// Tenants and credentials as the platform team's CLI makes them, for tests of either service.
export { createApiKey, createTenant, setTenantRateLimits } from '../../management-service/src/admin/provisioning.ts';
export { revokeApiKey } from '../../management-service/src/store/credentials.ts';
