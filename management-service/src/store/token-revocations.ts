import type { Knex } from 'knex';
import type { TenantRevocations } from '@platform/shared';

export type RevocationReason = 'access_key_revoked' | 'user_deleted' | 'refresh_token_reuse';

/** Refuses the access tokens naming `subject` (migration 008); a second revocation changes nothing. */
export async function insertRevocation(trx: Knex | Knex.Transaction, row: { tenant_id: string; subject: string; reason: RevocationReason }): Promise<void> {
  await trx.raw('insert into token_revocations (tenant_id, subject, reason) values (?, ?, ?) on conflict do nothing', [row.tenant_id, row.subject, row.reason]);
}

/** Whether the tenant exists and is enabled, and the credential ids revoked within a token's lifetime, in one read. */
export async function readTenantRevocations(db: Knex, tenantId: string): Promise<TenantRevocations> {
  const { rows } = await db.raw(
    `select t.disabled_at is null as active,
            array(select r.subject from token_revocations r where r.tenant_id = t.id and r.expires_at > now()) as revoked
       from tenants t where t.id = ?`,
    [tenantId],
  );
  const row = rows[0] as { active: boolean; revoked: string[] } | undefined;
  return row ? { active: row.active, revoked: new Set(row.revoked) } : { active: false, revoked: new Set() };
}
