// Tenants and credentials as the platform team's CLI makes them, for tests of either service.
export { createAccessKey, createApiKey, createTenant, setTenantRateLimits } from '@platform/management-service/admin/provisioning';
export { revokeApiKey } from '@platform/management-service/store/credentials';
