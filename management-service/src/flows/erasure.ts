import type { Knex } from 'knex';
import { EntityNotFound } from '../domain/errors.ts';
import { erasedUser, mustBeErasable } from '../domain/erasure.ts';
import { userErasure } from '../domain/events.ts';
import { users } from '../domain/entities/users.ts';
import type { Principal } from '../domain/principal.ts';
import { findEntity, type EntityRow } from '../store/entities.ts';
import { isErased, ownedPortfolios, redactUser } from '../store/erasure.ts';
import { insertEvents } from '../store/outbox.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';
import { writeNext } from './entity-writes.ts';

/**
 * Erases a user's personal data (docs/adr/0059-personal-data-erasure.md) in the caller's tenant
 * transaction: refused while an owned portfolio is open; otherwise every stored version of the user
 * is redacted, a last version, deleted, marks the user erased (its tokens are revoked with it), and
 * `users.erasure` tells the Client Middleware.
 * Erasing an erased user answers it as it is.
 */
export async function eraseUser(trx: Knex.Transaction, tenant: TenantSettings, principal: Principal, userId: string, now: string): Promise<EntityRow> {
  const current = await findEntity(trx, { tenantId: principal.tenantId, type: users.type, id: userId }, { forUpdate: true });
  if (!current) throw new EntityNotFound('user');
  if (await isErased(trx, principal.tenantId, userId)) return current;
  mustBeErasable(await ownedPortfolios(trx, principal.tenantId, userId));
  await redactUser(trx, principal.tenantId, userId, now);
  await insertEvents(trx, principal.tenantId, [userErasure(current, now)]);
  return writeNext(trx, users, tenant, { principal, now, tenant }, current, erasedUser(current.doc, now), { deleted: true });
}
