import bcrypt from 'bcryptjs';
import type { Knex } from 'knex';
import { ProblemError, newId } from '@platform/shared';
import { randomToken } from '../auth/secrets.ts';
import { findActiveTenant } from '../store/credentials.ts';
import { insertBusCredential } from '../store/bus-credentials.ts';

/**
 * bcrypt is the one slow hash nats-server reads from its configuration. The passwords are 32
 * random bytes, which no cost factor needs to protect; the cost is paid by the server at every
 * connection, so it stays moderate (docs/adr/0026-bus-authorization.md).
 */
export const BUS_PASSWORD_COST = 10;

export const hashBusPassword = (password: string, cost = BUS_PASSWORD_COST): Promise<string> => bcrypt.hash(password, cost);

/**
 * A tenant's credential on the event bus: user name and password for NATS and for MQTT. The
 * password is returned once and stored only as its bcrypt hash.
 */
export async function createBusCredential(
  db: Knex,
  tenantId: string,
  description?: string,
): Promise<{ id: string; tenant_id: string; username: string; password: string }> {
  if (!(await findActiveTenant(db, tenantId))) throw new ProblemError(404, 'not_found', `No enabled tenant ${tenantId}.`);
  const id = newId('A');
  const password = randomToken(32);
  await insertBusCredential(db, { id, tenant_id: tenantId, password_hash: await hashBusPassword(password), description });
  return { id, tenant_id: tenantId, username: id, password };
}
