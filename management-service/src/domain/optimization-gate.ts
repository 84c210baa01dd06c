import { expire, type Assessment } from './assessments.ts';
import { StateConflict } from './errors.ts';
import type { Doc } from './merge.ts';

/**
 * The life cycle rules of optimizations (docs/adr/0021-optimizations.md), pure: whether a portfolio may get a new
 * optimization (the gate), which optimization a new one supersedes, and when the owner may choose.
 */

/** Why the gate is closed. */
export type GateRefusal = 'DELETED' | 'NOT_ROBO' | 'ARCHIVED' | 'INACTIVE' | 'NO_POLICY' | 'SUITABILITY' | 'COOLDOWN' | 'PENDING' | 'AWAITING_EXECUTION';

/** An optimization as the rules see it: its id and stored document. */
export type OptimizationState = { id: string; doc: Doc };

export type GateInput = {
  portfolio: { doc: Doc; deleted: boolean };
  /** The policy the portfolio names, deleted ones included; undefined when it names none or one that does not exist. */
  policy: { deleted: boolean } | undefined;
  /** The suitability profile the portfolio links (config.manager_settings.suitability_profile_id), deleted ones included; undefined when it links none. */
  suitability?: { deleted: boolean; doc: Doc } | undefined;
  /** The portfolio's optimizations that are still open (PENDING, waiting for execution, or awaiting the owner's choice). */
  optimizations: OptimizationState[];
  now: string;
};

export type GateDecision = { open: true; supersede: OptimizationState[] } | { open: false; refusal: GateRefusal; detail: string };

const settings = (doc: Doc) => ((doc.config as Doc | undefined)?.manager_settings ?? {}) as Doc;
const manager = (doc: Doc) => String((doc.config as Doc | undefined)?.manager ?? '');

export const isAdvisory = (portfolio: Doc): boolean => manager(portfolio) === 'ROBO_ADVISOR_ADVISORY';
export const isDiscretionary = (portfolio: Doc): boolean => manager(portfolio) === 'ROBO_ADVISOR_DISCRETIONARY';
const isRobo = (portfolio: Doc) => isAdvisory(portfolio) || isDiscretionary(portfolio);

/** A SUCCESS of an advisory portfolio that recommends orders and waits for the owner to ACCEPT, REJECT or REOPTIMIZE. */
export const awaitsOwnerChoice = (portfolio: Doc, optimization: Doc): boolean =>
  isAdvisory(portfolio) && optimization.status === 'SUCCESS' && optimization.is_recommended === true && (optimization.owner_choice ?? null) === null;

type Closed = Extract<GateDecision, { open: false }>;

/**
 * Why a portfolio linked to a suitability profile may not be advised now (docs/adr/0027-assessments.md), or undefined:
 * it is advised only while the profile holds an ACCEPTED assessment that has not expired. A portfolio without a link
 * follows its policy alone; one with money to free for a withdrawal (divest_amount above 0) is never held back.
 */
export function suitabilityLapse(portfolio: Doc, profile: GateInput['suitability'], now: string): string | undefined {
  const own = settings(portfolio);
  if (typeof own.suitability_profile_id !== 'string') return undefined;
  if (typeof own.divest_amount === 'number' && own.divest_amount > 0) return undefined;
  if (!profile || profile.deleted)
    return `The portfolio's suitability profile ${own.suitability_profile_id} is deleted: link a profile with an ACCEPTED assessment.`;
  const assessments = ((profile.doc.assessments ?? []) as Assessment[]).map((a) => expire(a, now));
  if (assessments.some((a) => a.status === 'ACCEPTED')) return undefined;
  const statuses = assessments.map((a) => a.status).join(', ') || 'none';
  return `The portfolio's suitability profile ${own.suitability_profile_id} has no ACCEPTED assessment (${statuses}): the customer is assessed again before the portfolio is optimized.`;
}

const closed = (refusal: GateRefusal, detail: string): Closed => ({ open: false, refusal, detail });

/**
 * Why the portfolio itself may not be optimized (deleted, not robo-advised, archived, inactive, no usable policy), or
 * undefined. Also asked when a result or a time-out comes for a PENDING optimization: it ends when this holds.
 */
export function unoptimizable(portfolio: GateInput['portfolio'], policy: GateInput['policy']): Closed | undefined {
  const doc = portfolio.doc;
  const own = settings(doc);
  if (portfolio.deleted) return closed('DELETED', 'The portfolio is deleted.');
  if (!isRobo(doc))
    return closed('NOT_ROBO', `The portfolio is not robo-advised (its manager is ${manager(doc)}); only robo-advised portfolios are optimized.`);
  if (doc.archived === true) return closed('ARCHIVED', 'The portfolio is archived.');
  if (own.active === false) return closed('INACTIVE', 'The portfolio is inactive (config.manager_settings.active is false).');
  if (typeof own.policy_id !== 'string')
    return closed('NO_POLICY', 'The portfolio has no policy (config.manager_settings.policy_id) for the optimizer to follow.');
  if (!policy || policy.deleted) return closed('NO_POLICY', `The portfolio's policy ${own.policy_id} is deleted.`);
  return undefined;
}

/**
 * Whether the portfolio alone closes the gate, whatever its policy and optimizations are (deleted, not robo-advised,
 * archived, inactive, no policy named): a trigger on such a portfolio need not read them (docs/adr/0063-deposit-round-trips.md).
 */
export const closedByPortfolio = (portfolio: GateInput['portfolio']): boolean => unoptimizable(portfolio, { deleted: false }) !== undefined;

/**
 * One gate for every trigger: a portfolio may get a new optimization unless it is deleted, not robo-advised, archived,
 * inactive, has no usable policy, lacks a valid suitability assessment, is in its cool-down, or has an optimization that is PENDING or waiting for execution.
 * When it may, an advisory SUCCESS still awaiting the owner's choice is superseded by the new one (it becomes IGNORED).
 */
export function optimizationGate({ portfolio, policy, suitability, optimizations, now }: GateInput): GateDecision {
  const unfit = unoptimizable(portfolio, policy);
  if (unfit) return unfit;
  const unsuitable = suitabilityLapse(portfolio.doc, suitability, now);
  if (unsuitable) return closed('SUITABILITY', unsuitable);
  const cooldown = settings(portfolio.doc).optimization_cooldown_end;
  if (typeof cooldown === 'string' && Date.parse(cooldown) > Date.parse(now)) {
    return closed('COOLDOWN', `The portfolio is in its cool-down: no optimization before ${cooldown} (config.manager_settings.optimization_cooldown_end).`);
  }
  const pending = optimizations.find((o) => o.doc.status === 'PENDING');
  if (pending) return closed('PENDING', `Optimization ${pending.id} of this portfolio is still being computed.`);
  const executing = optimizations.find((o) => o.doc.execution_status === 'PENDING');
  if (executing) return closed('AWAITING_EXECUTION', `Optimization ${executing.id} of this portfolio is waiting for execution.`);
  return { open: true, supersede: optimizations.filter((o) => awaitsOwnerChoice(portfolio.doc, o.doc)) };
}

/** What the owner may choose (IGNORED is the service's). */
export type OwnerChoice = 'ACCEPT' | 'REJECT' | 'REOPTIMIZE';

/**
 * The owner may choose once, on an advisory portfolio's recommended SUCCESS that no newer optimization superseded;
 * anything else is a 409 state_conflict saying why.
 */
export function checkOwnerChoice(portfolio: { doc: Doc; deleted: boolean }, optimization: Doc): void {
  if (portfolio.deleted) throw new StateConflict('The portfolio of this optimization is deleted.');
  if (!isAdvisory(portfolio.doc)) {
    throw new StateConflict(
      `The portfolio's manager is ${manager(portfolio.doc)}: the owner chooses only on advisory mandates (ROBO_ADVISOR_ADVISORY); a discretionary one executes recommended optimizations itself.`,
    );
  }
  const status = String(optimization.status);
  if (status !== 'SUCCESS') throw new StateConflict(`The optimization is ${status}: the owner chooses only on a SUCCESS.`);
  const choice = optimization.owner_choice ?? null;
  if (choice === 'IGNORED') throw new StateConflict('A newer optimization of the portfolio superseded this one (owner_choice IGNORED).');
  if (choice !== null) throw new StateConflict(`The owner already chose ${String(choice)} on this optimization.`);
  if (optimization.is_recommended !== true) throw new StateConflict('The optimization is not recommended: it proposes nothing to accept or reject.');
}

/** The optimization with the owner's choice (or the service's IGNORED). */
export const withOwnerChoice = (optimization: Doc, choice: OwnerChoice | 'IGNORED'): Doc => ({ ...optimization, owner_choice: choice });

/** The optimizer's answer as stored on the optimization (contracts/events.asyncapi.yaml OptimizerResult). */
export type ResultFields = { status: 'SUCCESS' | 'FAILURE' | 'INFEASIBLE' | 'NOT_OPTIMIZED'; is_recommended: boolean; orders: Doc; detail?: string };

/** The next version of a PENDING optimization that received its result: orders and recommendation only with SUCCESS. */
export function withResult(optimization: Doc, result: ResultFields): Doc {
  const success = result.status === 'SUCCESS';
  return {
    ...optimization,
    status: result.status,
    is_recommended: success && result.is_recommended,
    orders: success ? result.orders : {},
    status_detail: success ? null : (result.detail ?? null),
  };
}

/** A PENDING optimization that ends without a stored result (the optimizer did not answer, the portfolio may no longer be optimized). */
export const ended = (optimization: Doc, status: 'FAILURE' | 'NOT_OPTIMIZED', detail: string): Doc => ({
  ...optimization,
  status,
  is_recommended: false,
  orders: {},
  status_detail: detail,
});

/** The detail of an optimization the optimizer never answered. */
export const unansweredDetail = (attempts: number, timeoutMs: number): string =>
  `The optimizer did not answer: ${attempts} request${attempts === 1 ? '' : 's'} went unanswered for ${timeoutMs} ms each.`;

/**
 * The UTC day (YYYY-MM-DD) whose nightly batch is due at `now`, given its time of day `at` (HH:MM, UTC): today once its
 * time has come (until the day ends), otherwise none. A run missed while no replica was up is made up later that day.
 */
export function nightlyDayDue(at: string, now: Date): string | undefined {
  const day = now.toISOString().slice(0, 10);
  return now.getTime() >= Date.parse(`${day}T${at}:00.000Z`) ? day : undefined;
}
