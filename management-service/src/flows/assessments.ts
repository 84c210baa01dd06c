import type { Knex } from 'knex';
import { isId } from '@platform/shared';
import {
  expire,
  riskProfileForScore,
  start,
  statusChanged,
  update,
  type Assessment,
  type AssessmentPatch,
  type QuestionnaireRules,
} from '../domain/assessments.ts';
import { suitabilityProfiles } from '../domain/entities/catalog.ts';
import { portfolios } from '../domain/entities/portfolios.ts';
import { EntityNotFound, InvalidField, StateConflict } from '../domain/errors.ts';
import { assessmentStatusUpdate } from '../domain/events.ts';
import { checkIfMatch } from '../domain/if-match.ts';
import type { Doc } from '../domain/merge.ts';
import { mustModify } from '../domain/permissions.ts';
import type { Principal } from '../domain/principal.ts';
import { findEntity, findVersion, type EntityRow } from '../store/entities.ts';
import { liveRiskProfiles } from '../store/assessments.ts';
import { insertEvents } from '../store/outbox.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';
import { writeNext } from './entity-writes.ts';
import { writeContext } from './funding.ts';

/**
 * The two assessment operations of a suitability profile (docs/adr/0027-assessments.md), each in the caller's
 * transaction: lock the profile, apply the pure rules of domain/assessments.ts, store the next version of the profile
 * and announce every status change with `profiles.assessment-status-update`.
 */

type Scope = { trx: Knex.Transaction; tenant: TenantSettings; principal: Principal; now: string };

/** The profile of the path, locked: 404 for a wrong letter, another tenant's id, an unknown or deleted one; 403 unless the caller may modify it. */
async function lockedProfile(scope: Scope, profileId: string): Promise<EntityRow> {
  const row = isId('N', profileId)
    ? await findEntity(scope.trx, { tenantId: scope.principal.tenantId, type: suitabilityProfiles.type, id: profileId }, { forUpdate: true })
    : undefined;
  if (!row || row.deleted) throw new EntityNotFound(suitabilityProfiles.label);
  mustModify(scope.principal, row, suitabilityProfiles.label);
  return row;
}

const rulesOf = (id: string, version: number, doc: Doc): QuestionnaireRules => ({
  id,
  version,
  questions: (doc.questions ?? []) as QuestionnaireRules['questions'],
  validity_days: doc.validity_days as number | undefined,
  cooldown_days: doc.cooldown_days as number | undefined,
  max_attempts: doc.max_attempts as number | undefined,
});

/**
 * The questionnaire as the attempt started with it: the version it recorded, or the current one for an assessment
 * started before versions were recorded. A deleted questionnaire still rules the assessments started with it.
 */
async function rulesOfAttempt(scope: Scope, tenantId: string, a: Assessment): Promise<QuestionnaireRules> {
  const id = a.questionnaire_id;
  if (a.questionnaire_version !== undefined) {
    const version = await findVersion(scope.trx, tenantId, id, a.questionnaire_version);
    if (version) return rulesOf(id, a.questionnaire_version, version.doc);
  }
  const current = await findEntity(scope.trx, { tenantId, type: 'questionnaires', id });
  if (!current) throw new EntityNotFound('questionnaire');
  return rulesOf(id, current.version, current.doc);
}

const assessmentsOf = (profile: EntityRow) => (profile.doc.assessments ?? []) as Assessment[];

/** Stores the profile with `next` in place of its assessment of the same questionnaire (or appended), announcing a status change. */
async function store(scope: Scope, profile: EntityRow, before: Assessment | undefined, next: Assessment): Promise<EntityRow> {
  const assessments = assessmentsOf(profile);
  const replaced = before ? assessments.map((a) => (a.questionnaire_id === next.questionnaire_id ? next : a)) : [...assessments, next];
  const doc: Doc = { ...profile.doc, assessments: replaced };
  const wctx = { principal: scope.principal, now: scope.now, tenant: scope.tenant, parent: undefined };
  const row = await writeNext(scope.trx, suitabilityProfiles, scope.tenant, wctx, profile, doc, { byClient: true });
  // An expiry the job had not applied yet is announced before the change that found it (ACCEPTED → EXPIRED → IN_PROGRESS).
  const lapsed = before && expire(before, scope.now);
  const changes = [...(lapsed && statusChanged(before, lapsed) ? [lapsed] : []), ...(statusChanged(lapsed ?? before, next) ? [next] : [])];
  await insertEvents(
    scope.trx,
    row.tenant_id,
    changes.map((a) => assessmentStatusUpdate({ profile_id: row.id, ...a }, scope.now)),
  );
  if (next.status === 'ACCEPTED' && statusChanged(before, next)) await onboardPortfolio(scope, row, next);
  return row;
}

/**
 * The onboarding effect (docs/adr/0027-assessments.md): accepting an assessment of a profile linked to a portfolio
 * gives the portfolio the profile, the risk profile whose score band the assessment's score falls in, that risk
 * profile's score and its policy, so a robo portfolio waiting for a policy moves on (its own effects announce it).
 */
async function onboardPortfolio(scope: Scope, profile: EntityRow, accepted: Assessment): Promise<void> {
  if (typeof profile.doc.portfolio_id !== 'string') return;
  const portfolio = await findEntity(scope.trx, { tenantId: profile.tenant_id, type: portfolios.type, id: profile.doc.portfolio_id }, { forUpdate: true });
  if (!portfolio || portfolio.deleted) return;
  const riskProfiles = await liveRiskProfiles(scope.trx, profile.tenant_id);
  const bands = riskProfiles.map((k) => ({ min_score: Number(k.doc.score), risk_profile_id: k.id }));
  const riskProfile = riskProfiles.find((k) => k.id === riskProfileForScore(accepted.score ?? 0, bands));
  const settings: Doc = { suitability_profile_id: profile.id };
  if (riskProfile) {
    settings.risk_profile_id = riskProfile.id;
    settings.risk_profile_score = Number(riskProfile.doc.score);
    if (typeof riskProfile.doc.policy_id === 'string') settings.policy_id = riskProfile.doc.policy_id;
  }
  const wctx = writeContext(scope.principal, scope.tenant, portfolio, scope.now);
  await writeNext(scope.trx, portfolios, scope.tenant, wctx, portfolio, portfolios.update(portfolio.doc, { config: { manager_settings: settings } }, wctx));
}

/** POST …/assessments/: starts (or restarts) the assessment of a questionnaire (default: the profile's). */
export async function startAssessment(
  scope: Scope,
  profileId: string,
  questionnaireId: string | undefined,
): Promise<{ row: EntityRow; questionnaireId: string }> {
  const profile = await lockedProfile(scope, profileId);
  const id = questionnaireId ?? String(profile.doc.questionnaire_id);
  const questionnaire = await findEntity(scope.trx, { tenantId: profile.tenant_id, type: 'questionnaires', id });
  if (!questionnaire || questionnaire.deleted) {
    if (questionnaireId !== undefined) throw new InvalidField(['body', 'questionnaire_id'], 'names no questionnaire of this tenant');
    throw new StateConflict("The profile's questionnaire is deleted: name another one in questionnaire_id.");
  }
  const before = assessmentsOf(profile).find((a) => a.questionnaire_id === id);
  const row = await store(scope, profile, before, start(before, rulesOf(id, questionnaire.version, questionnaire.doc), scope.now));
  return { row, questionnaireId: id };
}

/** PATCH …/assessments/{questionnaire_id}: answers and/or the move to COMPLETED or ACCEPTED. */
export async function updateAssessment(
  scope: Scope,
  profileId: string,
  questionnaireId: string,
  patch: AssessmentPatch,
  ifMatch: string | string[] | undefined,
): Promise<EntityRow> {
  const profile = await lockedProfile(scope, profileId);
  checkIfMatch(ifMatch, profile.version);
  const before = assessmentsOf(profile).find((a) => a.questionnaire_id === questionnaireId);
  if (!before) throw new EntityNotFound('assessment of this questionnaire');
  const next = update(before, patch, await rulesOfAttempt(scope, profile.tenant_id, before), scope.now);
  return store(scope, profile, before, next);
}

/**
 * The expiry job's change of one profile (docs/adr/0027-assessments.md): every ACCEPTED assessment whose validity
 * ended by `now` becomes EXPIRED in one new version, each announced. Answers how many expired (0: nothing to do).
 */
export async function expireProfile(trx: Knex.Transaction, tenant: TenantSettings, tenantId: string, profileId: string, now: string): Promise<number> {
  const profile = await findEntity(trx, { tenantId, type: suitabilityProfiles.type, id: profileId }, { forUpdate: true });
  if (!profile || profile.deleted) return 0;
  const before = assessmentsOf(profile);
  const after = before.map((a) => expire(a, now));
  const changed = after.filter((a, i) => statusChanged(before[i], a));
  if (changed.length === 0) return 0;
  const wctx = { principal: { tenantId, kind: 'machine' as const, subject: 'assessment-expiry' }, now, tenant, parent: undefined };
  const row = await writeNext(trx, suitabilityProfiles, tenant, wctx, profile, { ...profile.doc, assessments: after });
  await insertEvents(
    trx,
    tenantId,
    changed.map((a) => assessmentStatusUpdate({ profile_id: row.id, ...a }, now)),
  );
  return changed.length;
}
