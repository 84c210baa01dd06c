import type { Knex } from 'knex';
import { ProblemError, newId } from '@platform/shared';
import { hashSecret, randomToken, sha256 } from '../auth/secrets.ts';
import type { TenantRateLimits } from '../domain/rate-limits.ts';
import { insertAccessKey, insertApiKey, insertTenant, type Tenant } from '../store/credentials.ts';
import { updateTenantRateLimits } from '../store/rate-limits.ts';
import { idByExternalId } from '../store/entities.ts';
import { inTenant } from '../store/tenant-scope.ts';
import { DEFAULT_QUESTIONNAIRE_EXTERNAL_ID, defaultQuestionnaire } from '../domain/default-questionnaire.ts';
import { questionnaires } from '../domain/entities/catalog.ts';
import { writeNew } from '../flows/entity-writes.ts';

/** What the platform team does for a tenant (through the CLI): create it and its credentials. */

const TENANT_ID = /^[a-z][a-z0-9-]{1,62}$/;

/** A new tenant, with the default questionnaire (docs/default-questionnaire.md), in one transaction. */
export async function createTenant(db: Knex, input: { id: string; name?: string; brokerIntegration?: Tenant['broker_integration'] }): Promise<Tenant> {
  if (!TENANT_ID.test(input.id)) {
    throw new ProblemError(422, 'validation_failed', 'A tenant id is 2–63 characters: lower-case letters, digits and dashes, starting with a letter.');
  }
  return db.transaction(async (trx) => {
    const tenant = await insertTenant(trx, { id: input.id, name: input.name ?? input.id, broker_integration: input.brokerIntegration ?? 'CLIENT' });
    await ensureDefaultQuestionnaire(trx, tenant.id);
    return tenant;
  });
}

/**
 * The id of the tenant's default questionnaire, created when the tenant never had one (a tenant from before it
 * existed); one the tenant deleted stays deleted. Its author is the platform (no access key, no user).
 */
export function ensureDefaultQuestionnaire(db: Knex, tenantId: string, now = new Date()): Promise<string> {
  return inTenant(db, tenantId, async (trx, settings) => {
    const existing = await idByExternalId(trx, tenantId, questionnaires.type, DEFAULT_QUESTIONNAIRE_EXTERNAL_ID);
    if (existing) return existing;
    const wctx = { principal: { tenantId, kind: 'machine' as const, subject: 'platform' }, now: now.toISOString(), tenant: settings, parent: undefined };
    const row = await writeNew(trx, questionnaires, settings, wctx, questionnaires.create(defaultQuestionnaire(), wctx));
    return row.id;
  });
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

/**
 * A tenant's own rate limits in requests per minute (docs/adr/0023-rate-limits.md): `requests_per_minute`
 * for each of its machine clients and API keys, `user_requests_per_minute` for each of its end users;
 * null restores the service's default. Every replica applies a change within TOKEN_REVOCATION_CHECK_MS.
 */
export async function setTenantRateLimits(
  db: Knex,
  tenantId: string,
  changes: { requests_per_minute?: number | null; user_requests_per_minute?: number | null },
): Promise<{ tenant: string; rate_limits: TenantRateLimits }> {
  for (const [name, value] of Object.entries(changes)) {
    if (value !== null && value !== undefined && !(Number.isInteger(value) && value >= 1 && value <= 10_000_000)) {
      throw new ProblemError(422, 'validation_failed', `${name} is a whole number of requests per minute from 1 to 10000000.`);
    }
  }
  const given = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) as Record<string, number | null>;
  const limits = await updateTenantRateLimits(db, tenantId, given);
  if (!limits) throw new ProblemError(404, 'not_found', `No tenant ${tenantId}.`);
  return { tenant: tenantId, rate_limits: limits };
}
