import type { Knex } from 'knex';
import type { EntityKind } from '../../domain/entities/kind.ts';
import { portfolioEvents, profileEvents, type OutboundEvent } from '../../domain/events.ts';
import { findEntity, type EntityRow } from '../../store/entities.ts';
import type { TenantSettings } from '../../store/tenant-scope.ts';

async function owner(trx: Knex.Transaction, tenantId: string, userId: unknown) {
  const user = typeof userId === 'string' ? await findEntity(trx, { tenantId, type: 'users', id: userId }) : undefined;
  return user ? { id: user.id, external_id: (user.doc.external_id as string | null) ?? null } : undefined;
}

/** Loads what the event builders need (owners, the linked portfolio) and returns the events of a change. */
export async function eventsOfChange(
  trx: Knex.Transaction,
  kind: EntityKind,
  tenant: TenantSettings,
  before: EntityRow | undefined,
  after: EntityRow,
  now: string,
): Promise<OutboundEvent[]> {
  if (kind.type === 'portfolios') {
    const o = await owner(trx, after.tenant_id, after.doc.owned_by_user_id);
    return o ? portfolioEvents(before, after, o, tenant.broker_integration, now) : [];
  }
  if (kind.type === 'suitability-profiles' && typeof after.doc.portfolio_id === 'string') {
    const portfolio = await findEntity(trx, { tenantId: after.tenant_id, type: 'portfolios', id: after.doc.portfolio_id });
    return profileEvents(before, after, portfolio, portfolio && (await owner(trx, after.tenant_id, portfolio.doc.owned_by_user_id)), now);
  }
  return [];
}
