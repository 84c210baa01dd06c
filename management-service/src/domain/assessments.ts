import { fromNumber, sum } from '@platform/shared';
import type { components } from '@platform/api-types/management';
import { InvalidField, StateConflict, type Loc } from './errors.ts';

/**
 * The life cycle of an assessment of a suitability profile (docs/adr/0027-assessments.md), pure: start and restart,
 * answers checked against their questions, completion with its score, acceptance, expiry and the cool-down after too
 * many attempts. Every function takes the time as `now` and returns a new assessment; an illegal move throws a
 * StateConflict whose message names the current status, a bad answer an InvalidField whose `loc` names the question.
 */

export type Assessment = components['schemas']['Assessment'];
export type AssessmentStatus = components['schemas']['AssessmentStatus'];
/** A question as stored; `required` may be absent in older documents (the contract's default is true). */
export type Question = Omit<components['schemas']['Question'], 'required'> & { required?: boolean };
type AnswerValue = Assessment['answers'][string];
export type AnswersPatch = Record<string, AnswerValue | null>;
export type AssessmentPatch = { answers?: AnswersPatch; status?: 'COMPLETED' | 'ACCEPTED' };

/** What the rules need of a questionnaire: its questions and its limits (defaults per the contract). */
export type QuestionnaireRules = {
  id: string;
  /** The version these rules are of; a new attempt records it and is answered by it (docs/adr/0027-assessments.md). */
  version?: number;
  questions: Question[];
  validity_days?: number;
  cooldown_days?: number;
  max_attempts?: number;
};

/** One score band: a score of at least `min_score` (up to the next band) results in `risk_profile_id`. */
export type ScoreBand = { min_score: number; risk_profile_id: string };

const DAY_MS = 86_400_000;
const addDays = (now: string, days: number): string => new Date(Date.parse(now) + days * DAY_MS).toISOString();
const validityDays = (q: QuestionnaireRules) => q.validity_days ?? 365;
const cooldownDays = (q: QuestionnaireRules) => q.cooldown_days ?? 30;
const maxAttempts = (q: QuestionnaireRules) => q.max_attempts ?? 3;
const isRequired = (question: Question) => question.required ?? true;

const conflict = (a: Assessment, what: string) => new StateConflict(`The assessment is ${a.status}: ${what}.`);

const fresh = (q: QuestionnaireRules, attempts: number, now: string): Assessment => ({
  questionnaire_id: q.id,
  ...(q.version === undefined ? {} : { questionnaire_version: q.version }),
  status: 'IN_PROGRESS',
  answers: {},
  score: null,
  attempts,
  started_datetime: now,
  completed_datetime: null,
  accepted_datetime: null,
  expires_datetime: null,
  cooldown_end_datetime: null,
});

/** An ACCEPTED assessment whose validity has ended is EXPIRED (the expiry job and every change apply this first). */
export function expire(a: Assessment, now: string): Assessment {
  if (a.status !== 'ACCEPTED' || a.expires_datetime === null || Date.parse(a.expires_datetime) > Date.parse(now)) return a;
  return { ...a, status: 'EXPIRED' };
}

/**
 * Starts an attempt: a new assessment, or a restart of a COMPLETED or EXPIRED one with empty answers (attempts + 1),
 * or a new first attempt once a cool-down has ended. A start beyond `max_attempts` is itself the move to COOLDOWN
 * (stored and announced like every status change); starts during the cool-down are refused.
 */
export function start(current: Assessment | undefined, q: QuestionnaireRules, now: string): Assessment {
  if (current === undefined) return fresh(q, 1, now);
  const a = expire(current, now);
  switch (a.status) {
    case 'COOLDOWN':
      if (a.cooldown_end_datetime !== null && Date.parse(a.cooldown_end_datetime) > Date.parse(now))
        throw conflict(a, `a new attempt may start at ${a.cooldown_end_datetime}`);
      return fresh(q, 1, now);
    case 'COMPLETED':
    case 'EXPIRED':
      if (a.attempts >= maxAttempts(q))
        return { ...a, status: 'COOLDOWN', answers: {}, score: null, completed_datetime: null, cooldown_end_datetime: addDays(now, cooldownDays(q)) };
      return fresh(q, a.attempts + 1, now);
    case 'IN_PROGRESS':
      throw conflict(a, 'answer or complete it instead of starting it again');
    case 'ACCEPTED':
      throw conflict(a, `it is valid until ${a.expires_datetime}; it can be started again once it is EXPIRED`);
  }
}

const choiceValues = (question: Question) => new Set((question.options ?? []).map((o) => o.value));

/** Checks one answer against its question; throws InvalidField at `loc` when it does not fit. */
export function checkAnswer(question: Question, value: unknown, loc: Loc): void {
  const refuse = (msg: string) => {
    throw new InvalidField(loc, msg);
  };
  switch (question.type) {
    case 'SINGLE_CHOICE':
      if (typeof value !== 'string' || !choiceValues(question).has(value)) refuse(`must be one of the options: ${[...choiceValues(question)].join(', ')}`);
      return;
    case 'MULTIPLE_CHOICE': {
      if (!Array.isArray(value) || value.length === 0) return refuse('must be a non-empty list of option values');
      const allowed = choiceValues(question);
      const unknown = value.filter((v) => typeof v !== 'string' || !allowed.has(v));
      if (unknown.length > 0) refuse(`names values that are not options: ${unknown.join(', ')}`);
      if (new Set(value).size !== value.length) refuse('names an option more than once');
      return;
    }
    case 'NUMBER':
      if (typeof value !== 'number' || !Number.isFinite(value)) return refuse('must be a number');
      if (question.minimum !== undefined && value < question.minimum) refuse(`must be at least ${question.minimum}`);
      if (question.maximum !== undefined && value > question.maximum) refuse(`must be at most ${question.maximum}`);
      return;
    case 'BOOLEAN':
      if (typeof value !== 'boolean') refuse('must be true or false');
      return;
    case 'TEXT':
      if (typeof value !== 'string' || value.trim() === '') refuse('must be a non-empty text');
      return;
  }
}

/** Merges answers into the assessment (null removes one); a COMPLETED assessment returns to IN_PROGRESS. */
export function answer(a: Assessment, patch: AnswersPatch, q: QuestionnaireRules): Assessment {
  if (a.status !== 'IN_PROGRESS' && a.status !== 'COMPLETED') throw conflict(a, 'answers change only while IN_PROGRESS or COMPLETED');
  // No answer given changes nothing (a COMPLETED assessment stays COMPLETED).
  if (Object.keys(patch).length === 0) return a;
  const byId = new Map(q.questions.map((question) => [question.id, question]));
  const answers = { ...a.answers };
  for (const [id, value] of Object.entries(patch)) {
    const loc: Loc = ['body', 'answers', id];
    const question = byId.get(id);
    if (question === undefined) throw new InvalidField(loc, 'is not a question of this questionnaire');
    if (value === null) {
      delete answers[id];
      continue;
    }
    checkAnswer(question, value, loc);
    answers[id] = value;
  }
  return { ...a, status: 'IN_PROGRESS', answers, score: null, completed_datetime: null };
}

/** Sum of the scores of the chosen options, added exactly (a questionnaire may score in fractions). */
export function score(answers: Assessment['answers'], questions: Question[]): number {
  const scores = questions.flatMap((question) => {
    const value = answers[question.id];
    if (value === undefined || (question.type !== 'SINGLE_CHOICE' && question.type !== 'MULTIPLE_CHOICE')) return [];
    const chosen = new Set(Array.isArray(value) ? value : [value]);
    return (question.options ?? []).filter((o) => chosen.has(o.value)).map((o) => fromNumber(o.score));
  });
  return sum(scores).toNumber();
}

/** IN_PROGRESS → COMPLETED once every required question is answered (422 at the first one that is not). */
export function complete(a: Assessment, q: QuestionnaireRules, now: string): Assessment {
  if (a.status !== 'IN_PROGRESS') throw conflict(a, 'only an IN_PROGRESS assessment can be COMPLETED');
  const missing = q.questions.filter((question) => isRequired(question) && a.answers[question.id] === undefined);
  if (missing.length > 0)
    throw new InvalidField(['body', 'answers', missing[0]!.id], `is required to complete the assessment (unanswered: ${missing.map((m) => m.id).join(', ')})`);
  return { ...a, status: 'COMPLETED', score: score(a.answers, q.questions), completed_datetime: now };
}

/** COMPLETED → ACCEPTED, valid for the questionnaire's validity_days. */
export function accept(a: Assessment, q: QuestionnaireRules, now: string): Assessment {
  if (a.status !== 'COMPLETED') throw conflict(a, 'only a COMPLETED assessment can be ACCEPTED');
  return { ...a, status: 'ACCEPTED', accepted_datetime: now, expires_datetime: addDays(now, validityDays(q)) };
}

/** The contract's PATCH of an assessment: pending expiry first, then the answers, then the target status. */
export function update(current: Assessment, patch: AssessmentPatch, q: QuestionnaireRules, now: string): Assessment {
  let a = expire(current, now);
  if (patch.answers !== undefined) a = answer(a, patch.answers, q);
  if (patch.status === 'COMPLETED') a = complete(a, q, now);
  if (patch.status === 'ACCEPTED') a = accept(a, q, now);
  return a;
}

/** The risk profile a score results in: the band with the highest `min_score` not above it; undefined below all bands. */
export function riskProfileForScore(value: number, bands: ScoreBand[]): string | undefined {
  let best: ScoreBand | undefined;
  for (const band of bands) if (band.min_score <= value && (best === undefined || band.min_score > best.min_score)) best = band;
  return best?.risk_profile_id;
}

/** Whether a change moved the status (every such change emits `profiles.assessment-status-update`). */
export const statusChanged = (before: Assessment | undefined, after: Assessment): boolean => before?.status !== after.status;
