import type { Knex } from 'knex';
import { mustBeCustomersChange } from '../../domain/customer-rights.ts';
import { EntityNotFound, NotPermitted } from '../../domain/errors.ts';
import { optimizationOwnerChoiceUpdate } from '../../domain/events.ts';
import { checkIfMatch } from '../../domain/if-match.ts';
import { checkOwnerChoice, withOwnerChoice, type OwnerChoice } from '../../domain/optimization-gate.ts';
import { canModify } from '../../domain/permissions.ts';
import type { Principal } from '../../domain/principal.ts';
import type { EntityRow } from '../../store/entities.ts';
import { findOptimization, lockPortfolios, updateOptimizations } from '../../store/optimizations.ts';
import { insertEvents } from '../../store/outbox.ts';
import type { TenantSettings } from '../../store/tenant-scope.ts';
import { queueExecution } from '../execution.ts';
import { requestOptimizations } from './request.ts';
import { optimizationVersion, ref } from './rows.ts';

/**
 * PATCH /optimizations/{id}: the owner's (or the machine client's) choice on an advisory recommendation
 * (docs/adr/0021-optimizations.md). ACCEPT hands the orders to execution, REJECT closes it, REOPTIMIZE keeps the choice
 * and requests a new optimization through the gate (409 when it is closed). Emits optimizations.owner-choice-update.
 */
export async function chooseOnOptimization(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  principal: Principal,
  input: { id: string; choice: OwnerChoice; ifMatch: string | string[] | undefined },
  now: string,
): Promise<EntityRow> {
  const tenantId = principal.tenantId;
  const found = await findOptimization(trx, tenantId, input.id);
  if (!found) throw new EntityNotFound('optimization');
  const [portfolio] = await lockPortfolios(trx, tenantId, [found.parent_id!]);
  const current = (await findOptimization(trx, tenantId, input.id, { forUpdate: true }))!;
  if (!portfolio || !canModify(principal, portfolio)) throw new NotPermitted('You may not modify this optimization.');
  checkIfMatch(input.ifMatch, current.version);
  let doc = withOwnerChoice(current.doc, input.choice);
  mustBeCustomersChange(principal, 'optimizations', current.doc, doc);
  checkOwnerChoice(portfolio, current.doc);
  if (input.choice === 'ACCEPT') doc = { ...doc, ...(await queueExecution(trx, tenant, portfolio, { id: current.id, doc }, now)) };
  const next = optimizationVersion(current, doc, portfolio, now, principal.subject);
  await updateOptimizations(trx, tenantId, [next]);
  await insertEvents(trx, tenantId, [optimizationOwnerChoiceUpdate({ ...ref(next), owner_choice: input.choice }, now)]);
  if (input.choice === 'REOPTIMIZE') await requestOptimizations(trx, tenantId, [portfolio.id], 'REOPTIMIZE', now, { refuse: true, author: principal.subject });
  return next;
}
