import type { Knex } from 'knex';
import type { EntityKind } from '../domain/entities/kind.ts';
import { portfolioEvents, profileEvents, type OutboundEvent, type Owner } from '../domain/events.ts';
import type { Doc } from '../domain/merge.ts';
import { findEntity, type EntityRow } from '../store/entities.ts';
import { insertEvents } from '../store/outbox.ts';
import { insertRevocation } from '../store/token-revocations.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';
import { requestOptimization } from './optimization.ts';

export async function ownerOf(trx: Knex.Transaction, tenantId: string, userId: unknown): Promise<Owner | undefined> {
  const user = typeof userId === 'string' ? await findEntity(trx, { tenantId, type: 'users', id: userId }) : undefined;
  return user ? { id: user.id, external_id: (user.doc.external_id as string | null) ?? null } : undefined;
}

const divestAmount = (doc: Doc) => ((doc.config as Doc).manager_settings as Doc | undefined)?.divest_amount;

/** Events a flow adds to those of a portfolio change (a deposit's notification), given the owner. */
export type ExtraEvents = (owner: Owner, after: EntityRow) => OutboundEvent[];

/**
 * Writes what a change causes besides the entity itself, in its transaction: the outbound events
 * of the interface's catalogue (with a flow's `extra` ones, in one insert) and, when a withdrawal
 * is requested (divest_amount changed), an optimizer request for a robo-advised portfolio
 * (decisions §6, §10); when a user is deleted, the revocation of its access tokens.
 */
export async function recordEffects(
  trx: Knex.Transaction,
  kind: EntityKind,
  tenant: TenantSettings,
  before: EntityRow | undefined,
  after: EntityRow,
  now: string,
  extra?: ExtraEvents,
): Promise<void> {
  if (kind.type === 'portfolios') {
    const owner = await ownerOf(trx, after.tenant_id, after.doc.owned_by_user_id);
    if (owner) await insertEvents(trx, after.tenant_id, [...portfolioEvents(before, after, owner, tenant.broker_integration, now), ...(extra?.(owner, after) ?? [])]);
    const divest = divestAmount(after.doc);
    if (before && !after.deleted && divest !== undefined && divest !== divestAmount(before.doc)) await requestOptimization(trx, after, 'DIVEST_AMOUNT', now);
  }
  if (kind.type === 'users' && after.deleted && !before?.deleted) {
    await insertRevocation(trx, { tenant_id: after.tenant_id, subject: after.id, reason: 'user_deleted' });
  }
  if (kind.type === 'suitability-profiles' && typeof after.doc.portfolio_id === 'string') {
    const portfolio = await findEntity(trx, { tenantId: after.tenant_id, type: 'portfolios', id: after.doc.portfolio_id });
    const owner = portfolio && (await ownerOf(trx, after.tenant_id, portfolio.doc.owned_by_user_id));
    await insertEvents(trx, after.tenant_id, profileEvents(before, after, portfolio, owner, now));
  }
}
