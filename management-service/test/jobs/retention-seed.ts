import type { Knex } from 'knex';
import { newId, newUlid } from '@platform/shared';

/** Rows for the retention job's rules, each at an explicit instant, written as the owning role. */
export function retentionSeed(db: Knex, tenantId: string) {
  const at = (ms: number) => new Date(ms);
  return {
    async tenant(): Promise<void> {
      await db('tenants').insert({ id: tenantId, name: tenantId }).onConflict('id').ignore();
    },
    async idempotencyKey(key: string, expiresAt: number): Promise<void> {
      await db('idempotency_keys').insert({ tenant_id: tenantId, method: 'POST', path: '/portfolios/', key, request_hash: 'h', expires_at: at(expiresAt) });
    },
    async rateLimit(key: string, expire: number): Promise<void> {
      await db('rate_limits').insert({ key, points: 1, expire });
    },
    async revocation(subject: string, expiresAt: number): Promise<void> {
      await db('token_revocations').insert({ tenant_id: tenantId, subject, reason: 'user_deleted', expires_at: at(expiresAt) });
    },
    /** A refresh-token chain begun at `createdAt`, with one token per expiry given; answers its id. */
    async chain(createdAt: number, expiries: number[]): Promise<string> {
      const keyId = newId('A');
      await db('access_keys').insert({ id: keyId, tenant_id: tenantId, secret_hash: 'x' });
      const id = newUlid();
      await db('refresh_token_families').insert({ id, access_key_id: keyId, created_at: at(createdAt) });
      for (const expiresAt of expiries) {
        await db('refresh_tokens').insert({
          token_hash: Buffer.from(newUlid()),
          access_key_id: keyId,
          family_id: id,
          expires_at: at(expiresAt),
          used_at: at(createdAt),
          created_at: at(createdAt),
        });
      }
      return id;
    },
    /** Outbox rows written at `createdAt`, published then or (null) not yet; answers their event ids. */
    async outbox(n: number, createdAt: number, published: boolean): Promise<string[]> {
      const rows = Array.from({ length: n }, () => {
        const eventId = newUlid();
        return {
          tenant_id: tenantId,
          event_id: eventId,
          entity_id: newId('P'),
          subject: 'portfolios',
          action: 'creation',
          envelope: JSON.stringify({ event_id: eventId }),
          created_at: at(createdAt),
          published_at: published ? at(createdAt) : null,
        };
      });
      for (let i = 0; i < rows.length; i += 1000) await db('outbox').insert(rows.slice(i, i + 1000));
      return rows.map((r) => r.event_id);
    },
  };
}
