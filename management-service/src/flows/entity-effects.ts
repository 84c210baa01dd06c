import type { Knex } from 'knex';
import { heldCash } from '../domain/cash-holds.ts';
import type { EntityKind } from '../domain/entities/kind.ts';
import type { EffectPorts, ExtraEvents } from '../domain/entities/effects.ts';
import type { Owner } from '../domain/events.ts';
import { openInstructions } from '../store/broker-instructions.ts';
import { findEntity, type EntityRow } from '../store/entities.ts';
import { insertEvents } from '../store/outbox.ts';
import { insertRevocation } from '../store/token-revocations.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';
import { requestOptimization, requestOptimizationsOfPolicy } from './optimization/request.ts';
import { queueRoboWithdrawal } from './withdrawal-queue.ts';

export async function ownerOf(trx: Knex.Transaction, tenantId: string, userId: unknown): Promise<Owner | undefined> {
  const user = typeof userId === 'string' ? await findEntity(trx, { tenantId, type: 'users', id: userId }) : undefined;
  return user ? { id: user.id, external_id: (user.doc.external_id as string | null) ?? null } : undefined;
}

export type { ExtraEvents } from '../domain/entities/effects.ts';

/**
 * Writes what a change causes besides the entity itself, in its transaction: whatever the kind's
 * effects ask for (outbound events with a flow's `extra` ones, optimizer requests, token
 * revocations), through ports bound to this transaction, tenant and entity. `owner`: the owner the
 * flow read with its lock, given to the effects without reading it again.
 */
export async function recordEffects(
  trx: Knex.Transaction,
  kind: EntityKind,
  tenant: TenantSettings,
  before: EntityRow | undefined,
  after: EntityRow,
  now: string,
  extra?: ExtraEvents,
  byClient = false,
  owner?: Owner,
): Promise<void> {
  if (!kind.effects) return;
  const tenantId = after.tenant_id;
  const ports: EffectPorts = {
    ownerOf: async (userId) => (owner && owner.id === userId ? owner : ownerOf(trx, tenantId, userId)),
    find: (type, id) => findEntity(trx, { tenantId, type, id }),
    emit: (events) => insertEvents(trx, tenantId, events),
    requestOptimization: async (reason) => {
      await requestOptimization(trx, after, reason, now);
    },
    requestOptimizationsOfPolicy: async (reason) => {
      await requestOptimizationsOfPolicy(trx, tenantId, after.id, reason, now);
    },
    payOutDivestAmount: async () => {
      await queueRoboWithdrawal(trx, tenant, after, 'DIVEST_AMOUNT', now);
    },
    heldCash: async () => heldCash(await openInstructions(trx, tenantId, after.id)),
    revokeTokens: (reason) => insertRevocation(trx, { tenant_id: tenantId, subject: after.id, reason }),
  };
  await kind.effects({ before, after, now, brokerIntegration: tenant.broker_integration, byClient, extra }, ports);
}
