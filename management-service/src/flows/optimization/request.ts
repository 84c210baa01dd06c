import type { Knex } from 'knex';
import { newId } from '@platform/shared';
import { EntityNotFound, StateConflict } from '../../domain/errors.ts';
import { optimizationOwnerChoiceUpdate, type OutboundEvent } from '../../domain/events.ts';
import { closedByPortfolio, optimizationGate, withOwnerChoice } from '../../domain/optimization-gate.ts';
import { pendingOptimization, type OptimizationReason } from '../../domain/optimization-request.ts';
import type { Principal } from '../../domain/principal.ts';
import { firstVersion, type EntityRow } from '../../store/entities.ts';
import {
  OPTIMIZATIONS,
  entitiesOfType,
  insertOptimizations,
  insertRequests,
  lockPortfolios,
  openOptimizations,
  portfoliosOfPolicy,
  updateOptimizations,
} from '../../store/optimizations.ts';
import { insertEvents, insertMessages } from '../../store/outbox.ts';
import { attempt } from './attempts.ts';
import { optimizationVersion, policyIdOf, profileIdOf, ref } from './rows.ts';

/**
 * Requests to the optimizer (docs/adr/0021-optimizations.md), each in the caller's transaction and through the one
 * gate: a portfolio's trigger, a policy's fan-out, the operator's POST and the nightly batch. Portfolios are locked
 * before their optimizations, so that every writer of a portfolio's optimizations waits for the others and no two
 * wait for each other.
 */

export type RequestOptions = {
  /** Refuse with 409 state_conflict when the gate is closed (an operator's or owner's request) instead of skipping silently (a trigger). */
  refuse?: boolean;
  externalId?: string | null;
  /** Who asked (the caller's subject); null for the service's own triggers. */
  author?: string | null;
};

/**
 * Asks the optimizer to optimize these portfolios, each whose gate is open: a PENDING optimization, its request row
 * and its request message; an advisory SUCCESS still awaiting the owner's choice becomes IGNORED (with its event).
 * Everything in a few statements whatever the number of portfolios (the nightly batch). Returns the new optimizations.
 */
export async function requestOptimizations(
  trx: Knex.Transaction,
  tenantId: string,
  portfolioIds: string[],
  reason: OptimizationReason,
  now: string,
  options: RequestOptions = {},
): Promise<EntityRow[]> {
  const portfolios = await lockPortfolios(trx, tenantId, [...new Set(portfolioIds)]);
  const policyIds = [...new Set(portfolios.map(policyIdOf).filter((id) => id !== undefined))];
  const policies = new Map((await entitiesOfType(trx, tenantId, 'policies', policyIds)).map((p) => [p.id, p]));
  const profileIds = [...new Set(portfolios.map(profileIdOf).filter((id) => id !== undefined))];
  const profiles = new Map((await entitiesOfType(trx, tenantId, 'suitability-profiles', profileIds)).map((p) => [p.id, p]));
  const open = new Map<string, EntityRow[]>(portfolios.map((p) => [p.id, []]));
  const openRows = await openOptimizations(
    trx,
    tenantId,
    portfolios.map((p) => p.id),
  );
  for (const row of openRows) open.get(row.parent_id!)!.push(row);
  const created: EntityRow[] = [];
  const superseded: EntityRow[] = [];
  const attempts: ReturnType<typeof attempt>[] = [];
  const events: OutboundEvent[] = [];
  for (const portfolio of portfolios) {
    const policyId = policyIdOf(portfolio);
    const policy = policyId === undefined ? undefined : policies.get(policyId);
    const optimizations = open.get(portfolio.id) ?? [];
    const profileId = profileIdOf(portfolio);
    const suitability = profileId === undefined ? undefined : profiles.get(profileId);
    const decision = optimizationGate({ portfolio, policy, suitability, optimizations, now });
    if (!decision.open) {
      if (options.refuse) throw new StateConflict(decision.detail);
      continue;
    }
    for (const old of decision.supersede) {
      const row = optimizations.find((o) => o.id === old.id)!;
      const next = optimizationVersion(row, withOwnerChoice(row.doc, 'IGNORED'), portfolio, now, null);
      superseded.push(next);
      events.push(optimizationOwnerChoiceUpdate({ ...ref(next), owner_choice: 'IGNORED' }, now));
    }
    const id = newId('O');
    const doc = pendingOptimization(portfolio.id, options.externalId ?? null);
    created.push(firstVersion({ tenantId, type: OPTIMIZATIONS, id, parentId: portfolio.id, doc, access: portfolio, now, author: options.author ?? null }));
    attempts.push(attempt({ portfolio, policy: policy!, optimizationId: id, reason, attempt: 1, now }));
  }
  await updateOptimizations(trx, tenantId, superseded);
  await insertOptimizations(trx, tenantId, created);
  await insertRequests(
    trx,
    attempts.map((a) => a.request),
  );
  await insertMessages(
    trx,
    tenantId,
    attempts.map((a) => a.message),
  );
  await insertEvents(trx, tenantId, events);
  return created;
}

/**
 * One portfolio's trigger (a deposit, a change of the portfolio): the new optimization's id, or undefined when the gate is closed.
 * The caller holds the portfolio's lock and passes the state it wrote: when that state alone closes the gate (a
 * user-managed portfolio, say), nothing is read or written (docs/adr/0063-deposit-round-trips.md).
 */
export async function requestOptimization(trx: Knex.Transaction, portfolio: EntityRow, reason: OptimizationReason, now: string): Promise<string | undefined> {
  if (closedByPortfolio(portfolio)) return undefined;
  const [created] = await requestOptimizations(trx, portfolio.tenant_id, [portfolio.id], reason, now);
  return created?.id;
}

/** How many portfolios one statement of a fan-out takes (bind parameters and lock time stay bounded). */
export const REQUEST_BATCH = 500;

/** A policy's change: every robo-advised portfolio that follows it, in the caller's transaction. Returns how many were requested. */
export async function requestOptimizationsOfPolicy(
  trx: Knex.Transaction,
  tenantId: string,
  policyId: string,
  reason: OptimizationReason,
  now: string,
): Promise<number> {
  const ids = await portfoliosOfPolicy(trx, tenantId, policyId);
  let requested = 0;
  for (let i = 0; i < ids.length; i += REQUEST_BATCH)
    requested += (await requestOptimizations(trx, tenantId, ids.slice(i, i + REQUEST_BATCH), reason, now)).length;
  return requested;
}

/** POST /portfolios/{id}/optimizations/ by an operator: the new PENDING optimization, or 409 saying why the gate is closed. */
export async function requestByOperator(
  trx: Knex.Transaction,
  principal: Principal,
  portfolioId: string,
  externalId: string | null,
  now: string,
): Promise<EntityRow> {
  const [portfolio] = await lockPortfolios(trx, principal.tenantId, [portfolioId]);
  if (!portfolio || portfolio.deleted) throw new EntityNotFound('portfolio');
  const [created] = await requestOptimizations(trx, principal.tenantId, [portfolioId], 'OPERATOR', now, {
    refuse: true,
    externalId,
    author: principal.subject,
  });
  return created!;
}
