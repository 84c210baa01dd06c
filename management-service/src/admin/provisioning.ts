import type { Knex } from 'knex';
import { ProblemError, newId } from '@platform/shared';
import { hashSecret, randomToken, sha256 } from '../auth/secrets.ts';
import { insertAccessKey, insertApiKey, insertTenant, type Tenant } from '../store/credentials.ts';

/** What the platform team does for a tenant (through the CLI): create it and its credentials. */

const TENANT_ID = /^[a-z][a-z0-9-]{1,62}$/;

export async function createTenant(db: Knex, input: { id: string; name?: string; brokerIntegration?: Tenant['broker_integration'] }): Promise<Tenant> {
  if (!TENANT_ID.test(input.id)) {
    throw new ProblemError(422, 'validation_failed', 'A tenant id is 2–63 characters: lower-case letters, digits and dashes, starting with a letter.');
  }
  return insertTenant(db, { id: input.id, name: input.name ?? input.id, broker_integration: input.brokerIntegration ?? 'CLIENT' });
}

/** A management access key; the secret is returned once and stored only as a slow hash. */
export async function createAccessKey(db: Knex, tenantId: string, description?: string): Promise<{ access_key_id: string; secret_access_key: string }> {
  const id = newId('A');
  const secret = randomToken(32);
  await insertAccessKey(db, { id, tenant_id: tenantId, secret_hash: await hashSecret(secret), description });
  return { access_key_id: id, secret_access_key: secret };
}

/** A data API key (`dk_…`); returned once, stored as its SHA-256 digest. */
export async function createApiKey(db: Knex, tenantId: string, description?: string): Promise<{ api_key_id: string; api_key: string }> {
  const id = newId('A');
  const key = `dk_${randomToken(32)}`;
  await insertApiKey(db, { id, tenant_id: tenantId, key_hash: sha256(key), description });
  return { api_key_id: id, api_key: key };
}
