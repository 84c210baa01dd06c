import type { Knex } from 'knex';
import { newId, newUlid, subjects } from '@platform/shared';
import { mustBeCustomersChange } from '../domain/customer-rights.ts';
import { EntityNotFound, NotPermitted, StateConflict } from '../domain/errors.ts';
import { optimizationOwnerChoiceUpdate, optimizationStatusUpdate, type OutboundEvent } from '../domain/events.ts';
import { checkIfMatch } from '../domain/if-match.ts';
import type { Doc } from '../domain/merge.ts';
import {
  checkOwnerChoice,
  ended,
  isDiscretionary,
  optimizationGate,
  unansweredDetail,
  unoptimizable,
  withOwnerChoice,
  withResult,
  type OwnerChoice,
  type ResultFields,
} from '../domain/optimization-gate.ts';
import { inputsDigest, optimizerInputs, optimizerRequest, pendingOptimization, type OptimizationReason } from '../domain/optimization-request.ts';
import { canModify } from '../domain/permissions.ts';
import type { Principal } from '../domain/principal.ts';
import type { EntityRow } from '../store/entities.ts';
import {
  attemptsOf,
  entitiesOfType,
  findOptimization,
  insertOptimizations,
  insertRequests,
  lockPortfolios,
  lockRequest,
  lockWaitingRequest,
  markAnswered,
  markTimedOut,
  openOptimizations,
  portfoliosOfPolicy,
  updateOptimizations,
  type NewRequest,
  type RequestRow,
} from '../store/optimizations.ts';
import { insertEvents, insertMessages, type InternalMessage } from '../store/outbox.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';
import { queueExecution } from './execution.ts';

/**
 * Optimizations (docs/adr/0021-optimizations.md), each step in the caller's transaction: requests through the one
 * gate, the optimizer's results, time-outs, and the owner's choice. Portfolios are locked before their optimizations,
 * so that every writer of a portfolio's optimizations waits for the others and no two wait for each other.
 */

/** An id the portfolio's manager settings name, when they name one. */
const settingId =
  (field: string) =>
  (portfolio: EntityRow): string | undefined => {
    const id = ((portfolio.doc.config as Doc | undefined)?.manager_settings as Doc | undefined)?.[field];
    return typeof id === 'string' ? id : undefined;
  };
const policyIdOf = settingId('policy_id');
const profileIdOf = settingId('suitability_profile_id');

/** The next version of an optimization, readable and modifiable by whoever may read and modify its portfolio. */
const nextVersion = (current: EntityRow, doc: Doc, portfolio: EntityRow, now: string, author: string | null): EntityRow => ({
  ...current,
  version: current.version + 1,
  doc,
  readable_by: portfolio.readable_by,
  modifiable_by: portfolio.modifiable_by,
  version_at: new Date(now),
  version_author_id: author,
});

const ref = (row: EntityRow) => ({ id: row.id, portfolio_id: String(row.doc.portfolio_id), external_id: (row.doc.external_id as string | null) ?? null });

/** One request to the optimizer: its bookkeeping row and its message for the relay (published on the tenant's platform.optimizer.requests.<tenant>). */
function attempt(input: { portfolio: EntityRow; policy: EntityRow; optimizationId: string; reason: OptimizationReason; attempt: number; now: string }): {
  request: NewRequest;
  message: InternalMessage;
} {
  const requestId = newUlid();
  const tenantId = input.portfolio.tenant_id;
  const payload = optimizerRequest({
    requestId,
    tenantId,
    portfolio: input.portfolio,
    policy: input.policy.doc,
    optimizationId: input.optimizationId,
    reason: input.reason,
    now: input.now,
  });
  return {
    request: {
      request_id: requestId,
      tenant_id: tenantId,
      optimization_id: input.optimizationId,
      portfolio_id: input.portfolio.id,
      reason: input.reason,
      attempt: input.attempt,
      sent_at: input.now,
      inputs_digest: inputsDigest(payload, input.policy),
    },
    message: { id: requestId, natsSubject: subjects.optimizerRequests(tenantId), entityId: input.portfolio.id, payload, created: input.now },
  };
}

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
  const at = new Date(now);
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
      const next = nextVersion(row, withOwnerChoice(row.doc, 'IGNORED'), portfolio, now, null);
      superseded.push(next);
      events.push(optimizationOwnerChoiceUpdate({ ...ref(next), owner_choice: 'IGNORED' }, now));
    }
    const id = newId('O');
    created.push({
      tenant_id: tenantId,
      id,
      type: 'optimizations',
      parent_id: portfolio.id,
      version: 1,
      doc: pendingOptimization(portfolio.id, options.externalId ?? null),
      deleted: false,
      readable_by: portfolio.readable_by,
      modifiable_by: portfolio.modifiable_by,
      created_at: at,
      version_at: at,
      version_author_id: options.author ?? null,
    });
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

/** One portfolio's trigger (a deposit, a change of the portfolio): the new optimization's id, or undefined when the gate is closed. */
export async function requestOptimization(trx: Knex.Transaction, portfolio: EntityRow, reason: OptimizationReason, now: string): Promise<string | undefined> {
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

/** What became of a result or a time-out. */
export type ResultOutcome = 'UNKNOWN_REQUEST' | 'ALREADY_ANSWERED' | 'MISMATCH' | 'LATE' | 'STORED' | 'RESENT' | 'CLOSED' | 'FAILED' | 'NOT_WAITING';

/** The portfolio's policy, when it names one that exists. */
async function policyOf(trx: Knex.Transaction, portfolio: EntityRow): Promise<EntityRow | undefined> {
  const id = policyIdOf(portfolio);
  return id === undefined ? undefined : (await entitiesOfType(trx, portfolio.tenant_id, 'policies', [id]))[0];
}

/**
 * A PENDING optimization whose request is no longer useful (stale inputs, no answer in time) is asked again with the
 * portfolio's current inputs, as the next attempt; when the portfolio may no longer be optimized, it ends NOT_OPTIMIZED
 * saying why (which reopens the gate).
 */
async function askAgainOrClose(
  trx: Knex.Transaction,
  portfolio: EntityRow,
  optimization: EntityRow,
  previous: RequestRow,
  now: string,
): Promise<ResultOutcome> {
  const tenantId = portfolio.tenant_id;
  const policy = await policyOf(trx, portfolio);
  // Only the portfolio's own state counts: a cool-down set since holds back new optimizations, not this one.
  const unfit = unoptimizable(portfolio, policy);
  if (unfit) {
    const detail = `The portfolio changed while the optimizer computed and may no longer be optimized: ${unfit.detail}`;
    await updateOptimizations(trx, tenantId, [nextVersion(optimization, ended(optimization.doc, 'NOT_OPTIMIZED', detail), portfolio, now, null)]);
    return 'CLOSED';
  }
  const { last } = await attemptsOf(trx, tenantId, optimization.id);
  const next = attempt({ portfolio, policy: policy!, optimizationId: optimization.id, reason: previous.reason as OptimizationReason, attempt: last + 1, now });
  await insertRequests(trx, [next.request]);
  await insertMessages(trx, tenantId, [next.message]);
  return 'RESENT';
}

/** The optimizer's answer to one request (contracts/events.asyncapi.yaml OptimizerResult). */
export type OptimizerResult = ResultFields & { request_id: string; tenant_id: string; portfolio_id: string; optimization_id: string };

/**
 * Stores an optimizer result, at most once per request: an unknown or already answered request changes nothing; an
 * optimization no longer PENDING records the late result only; a portfolio whose inputs changed since the request is
 * asked again instead. Otherwise the optimization's next version holds the result, SUCCESS emits
 * optimizations.status-update, and a recommended SUCCESS of a discretionary portfolio goes to execution (its fields
 * in the same version).
 */
export async function storeResult(trx: Knex.Transaction, tenant: TenantSettings, result: OptimizerResult, now: string): Promise<ResultOutcome> {
  const tenantId = result.tenant_id;
  const request = await lockRequest(trx, tenantId, result.request_id);
  if (!request) return 'UNKNOWN_REQUEST';
  if (request.result_at) return 'ALREADY_ANSWERED';
  if (request.optimization_id !== result.optimization_id || request.portfolio_id !== result.portfolio_id) return 'MISMATCH';
  const answered = (outcome: 'STORED' | 'LATE' | 'STALE') =>
    markAnswered(trx, tenantId, request.request_id, { result_at: now, result_status: result.status, outcome });
  const [portfolio] = await lockPortfolios(trx, tenantId, [request.portfolio_id]);
  const optimization = await findOptimization(trx, tenantId, request.optimization_id, { forUpdate: true });
  if (!portfolio || !optimization || optimization.doc.status !== 'PENDING') {
    await answered('LATE');
    return 'LATE';
  }
  const policy = await policyOf(trx, portfolio);
  if (!policy || unoptimizable(portfolio, policy) || inputsDigest(optimizerInputs(portfolio.doc), policy) !== request.inputs_digest) {
    await answered('STALE');
    return askAgainOrClose(trx, portfolio, optimization, request, now);
  }
  let doc = withResult(optimization.doc, result);
  if (doc.status === 'SUCCESS' && doc.is_recommended === true && isDiscretionary(portfolio.doc)) {
    doc = { ...doc, ...(await queueExecution(trx, tenant, portfolio, { id: optimization.id, doc }, now)) };
  }
  const next = nextVersion(optimization, doc, portfolio, now, null);
  await updateOptimizations(trx, tenantId, [next]);
  // Event version 1.0.0 knows only SUCCESS (contracts/events.asyncapi.yaml); the other outcomes are logged by the caller.
  if (doc.status === 'SUCCESS')
    await insertEvents(trx, tenantId, [optimizationStatusUpdate({ ...ref(next), is_recommended: doc.is_recommended === true, status: 'SUCCESS' }, now)]);
  await answered('STORED');
  return 'STORED';
}

export type TimeoutLimits = { timeoutMs: number; maxAttempts: number };

/**
 * A request that waited longer than the time-out: it is given up (its result may still arrive and be used) and the
 * optimization is asked again as a new attempt, or, after `maxAttempts` unanswered ones, ends as FAILURE saying the
 * optimizer did not answer (which reopens the gate).
 */
export async function handleOverdueRequest(
  trx: Knex.Transaction,
  tenantId: string,
  requestId: string,
  limits: TimeoutLimits,
  now: string,
): Promise<ResultOutcome> {
  const request = await lockWaitingRequest(trx, tenantId, requestId);
  if (!request) return 'NOT_WAITING';
  await markTimedOut(trx, tenantId, requestId, now);
  const [portfolio] = await lockPortfolios(trx, tenantId, [request.portfolio_id]);
  const optimization = await findOptimization(trx, tenantId, request.optimization_id, { forUpdate: true });
  if (!portfolio || !optimization || optimization.doc.status !== 'PENDING') return 'NOT_WAITING';
  const { timedOut } = await attemptsOf(trx, tenantId, optimization.id);
  if (timedOut >= limits.maxAttempts) {
    const failed = ended(optimization.doc, 'FAILURE', unansweredDetail(timedOut, limits.timeoutMs));
    await updateOptimizations(trx, tenantId, [nextVersion(optimization, failed, portfolio, now, null)]);
    return 'FAILED';
  }
  return askAgainOrClose(trx, portfolio, optimization, request, now);
}

/**
 * PATCH /optimizations/{id}: the owner's (or the machine client's) choice on an advisory recommendation. ACCEPT hands
 * the orders to execution, REJECT closes it, REOPTIMIZE keeps the choice and requests a new optimization through the
 * gate (409 when it is closed). Emits optimizations.owner-choice-update.
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
  const next = nextVersion(current, doc, portfolio, now, principal.subject);
  await updateOptimizations(trx, tenantId, [next]);
  await insertEvents(trx, tenantId, [optimizationOwnerChoiceUpdate({ ...ref(next), owner_choice: input.choice }, now)]);
  if (input.choice === 'REOPTIMIZE') await requestOptimizations(trx, tenantId, [portfolio.id], 'REOPTIMIZE', now, { refuse: true, author: principal.subject });
  return next;
}
