import assert from 'node:assert/strict';
import {
  accept,
  answer,
  checkAnswer,
  complete,
  expire,
  riskProfileForScore,
  start,
  statusChanged,
  update,
  type Assessment,
  type Question,
  type QuestionnaireRules,
} from '../../src/domain/assessments.ts';
import { InvalidField, StateConflict } from '../../src/domain/errors.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const at = (days: number) => new Date(Date.parse(T0) + days * 86_400_000).toISOString();

const option = (value: string, score: number) => ({ value, label: { en: value }, score });
const question = (id: string, type: Question['type'], extra: Partial<Question> = {}): Question => ({ id, text: { en: id }, type, ...extra });

const questions: Question[] = [
  question('experience', 'SINGLE_CHOICE', { options: [option('NONE', 0), option('SOME', 4)] }),
  question('products', 'MULTIPLE_CHOICE', { options: [option('FUNDS', 0.1), option('STOCKS', 0.2), option('BONDS', 1)] }),
  question('horizon_years', 'NUMBER'),
  question('lost_money_before', 'BOOLEAN'),
  question('goal', 'TEXT', { required: false }),
];
const questionnaire = (overrides: Partial<QuestionnaireRules> = {}): QuestionnaireRules => ({
  id: 'Q01HZRR9SQ1Z6MVX81DFQX1ETVA',
  questions,
  validity_days: 365,
  cooldown_days: 30,
  max_attempts: 2,
  ...overrides,
});
const q = questionnaire();
const allRequired = { experience: 'SOME', products: ['FUNDS', 'STOCKS'], horizon_years: 15, lost_money_before: false };

const completed = (now = T0): Assessment => update(start(undefined, q, now), { answers: allRequired, status: 'COMPLETED' }, q, now);
const accepted = (now = T0): Assessment => accept(completed(now), q, now);

/** Runs `fn`, expects a StateConflict whose message names `status`. */
function conflictNaming(status: string, fn: () => unknown) {
  assert.throws(fn, (error: unknown) => error instanceof StateConflict && error.message.includes(`is ${status}`));
}

describe('assessments (pure life cycle, docs/adr/0027-assessments.md)', () => {
  describe('transition table', () => {
    it('starts IN_PROGRESS with attempt 1 and nothing answered', () => {
      assert.deepEqual(start(undefined, q, T0), {
        questionnaire_id: q.id,
        status: 'IN_PROGRESS',
        answers: {},
        score: null,
        attempts: 1,
        started_datetime: T0,
        completed_datetime: null,
        accepted_datetime: null,
        expires_datetime: null,
        cooldown_end_datetime: null,
      });
    });

    it('IN_PROGRESS → COMPLETED with the exact score once all required questions are answered', () => {
      const a = completed(at(1));
      assert.equal(a.status, 'COMPLETED');
      assert.equal(a.score, 4.3); // 4 + 0.1 + 0.2 added as decimals, not 4.300000000000001
      assert.equal(a.completed_datetime, at(1));
      assert.equal(a.accepted_datetime, null);
    });

    it('refuses COMPLETED while a required question is open, naming it; optional ones may stay open', () => {
      const a = answer(start(undefined, q, T0), { experience: 'SOME', products: ['BONDS'], horizon_years: 3 }, q);
      assert.throws(
        () => complete(a, q, T0),
        (error: unknown) => error instanceof InvalidField && error.loc.join('.') === 'body.answers.lost_money_before',
      );
      assert.equal(complete(answer(a, { lost_money_before: true }, q), q, T0).score, 5);
    });

    it('COMPLETED → ACCEPTED sets accepted and expiry (accepted + validity_days)', () => {
      const a = accept(completed(), q, at(2));
      assert.equal(a.status, 'ACCEPTED');
      assert.equal(a.accepted_datetime, at(2));
      assert.equal(a.expires_datetime, at(367));
      assert.equal(accept(completed(), questionnaire({ validity_days: undefined }), T0).expires_datetime, at(365), 'default validity 365 days');
    });

    it('ACCEPTED → EXPIRED exactly when the validity ends, keeping accepted_datetime', () => {
      const a = accepted();
      assert.equal(expire(a, at(365)).status, 'EXPIRED');
      assert.equal(expire(a, new Date(Date.parse(at(365)) - 1).toISOString()).status, 'ACCEPTED');
      assert.equal(expire(a, at(400)).accepted_datetime, T0);
      assert.equal(expire(completed(), at(999)).status, 'COMPLETED', 'only ACCEPTED expires');
    });

    it('changing the answers of a COMPLETED assessment returns it to IN_PROGRESS without score', () => {
      const a = answer(completed(), { horizon_years: 30 }, q);
      assert.equal(a.status, 'IN_PROGRESS');
      assert.equal(a.score, null);
      assert.equal(a.completed_datetime, null);
      assert.equal(a.answers.horizon_years, 30);
      assert.equal(answer(a, { horizon_years: null }, q).answers.horizon_years, undefined, 'null removes an answer');
      assert.deepEqual(answer(completed(), {}, q), completed(), 'no answers: nothing changes');
    });

    it('restarts COMPLETED and EXPIRED with empty answers and one more attempt', () => {
      for (const before of [completed(), expire(accepted(), at(365))]) {
        const a = start(before, q, at(400));
        assert.equal(a.status, 'IN_PROGRESS');
        assert.equal(a.attempts, 2);
        assert.deepEqual(a.answers, {});
        assert.equal(a.started_datetime, at(400));
        assert.equal(a.accepted_datetime, null);
        assert.equal(a.expires_datetime, null);
      }
    });

    it('an ACCEPTED assessment past its expiry restarts even before the job marked it EXPIRED', () => {
      assert.equal(start(accepted(), q, at(366)).status, 'IN_PROGRESS');
    });

    it('a start beyond max_attempts goes to COOLDOWN; starts are refused until its end, then attempt 1 again', () => {
      const second = update(start(completed(), q, at(1)), { answers: allRequired, status: 'COMPLETED' }, q, at(1));
      assert.equal(second.attempts, 2);
      const cooling = start(second, q, at(2));
      assert.equal(cooling.status, 'COOLDOWN');
      assert.equal(cooling.cooldown_end_datetime, at(32));
      assert.deepEqual(cooling.answers, {});
      conflictNaming('COOLDOWN', () => start(cooling, q, at(31)));
      const again = start(cooling, q, at(32));
      assert.equal(again.status, 'IN_PROGRESS');
      assert.equal(again.attempts, 1);
      assert.equal(again.cooldown_end_datetime, null);
    });

    it('a cool-down of 0 days lets the next start begin at once', () => {
      const q0 = questionnaire({ max_attempts: 1, cooldown_days: 0 });
      const cooling = start(update(start(undefined, q0, T0), { answers: allRequired, status: 'COMPLETED' }, q0, T0), q0, at(1));
      assert.equal(cooling.status, 'COOLDOWN');
      assert.equal(start(cooling, q0, at(1)).status, 'IN_PROGRESS');
    });

    it('refuses every illegal transition with a StateConflict naming the current status', () => {
      const inProgress = start(undefined, q, T0);
      conflictNaming('IN_PROGRESS', () => start(inProgress, q, T0));
      conflictNaming('IN_PROGRESS', () => accept(inProgress, q, T0));
      conflictNaming('COMPLETED', () => complete(completed(), q, T0));
      conflictNaming('ACCEPTED', () => start(accepted(), q, at(1)));
      conflictNaming('ACCEPTED', () => answer(accepted(), { horizon_years: 1 }, q));
      conflictNaming('ACCEPTED', () => complete(accepted(), q, T0));
      conflictNaming('ACCEPTED', () => accept(accepted(), q, T0));
      const expired = expire(accepted(), at(365));
      conflictNaming('EXPIRED', () => answer(expired, { horizon_years: 1 }, q));
      conflictNaming('EXPIRED', () => update(accepted(), { status: 'ACCEPTED' }, q, at(365)));
      const cooling = { ...completed(), attempts: 2, status: 'COOLDOWN' as const, cooldown_end_datetime: at(30) };
      conflictNaming('COOLDOWN', () => answer(cooling, { horizon_years: 1 }, q));
      conflictNaming('COOLDOWN', () => accept(cooling, q, T0));
    });

    it('applies answers before the status, and leaves the input unchanged', () => {
      const before = start(undefined, q, T0);
      const copy = structuredClone(before);
      const a = update(before, { answers: allRequired, status: 'COMPLETED' }, q, at(1));
      assert.equal(a.status, 'COMPLETED');
      assert.deepEqual(before, copy);
    });

    it('reports status changes (each one is announced)', () => {
      const a = start(undefined, q, T0);
      assert.equal(statusChanged(undefined, a), true);
      assert.equal(statusChanged(a, answer(a, { horizon_years: 2 }, q)), false);
      assert.equal(statusChanged(completed(), answer(completed(), { horizon_years: 2 }, q)), true);
    });
  });

  describe('answer validation', () => {
    const loc = ['body', 'answers', 'x'];
    const cases: [Question, unknown, unknown][] = [
      [questions[0]!, 'SOME', 'LOTS'],
      [questions[1]!, ['FUNDS', 'BONDS'], ['FUNDS', 'GOLD']],
      [questions[1]!, ['STOCKS'], []],
      [questions[1]!, ['BONDS'], ['BONDS', 'BONDS']],
      [questions[2]!, 0, '15'],
      [question('age', 'NUMBER', { minimum: 18, maximum: 120 }), 18, 17.5],
      [question('age', 'NUMBER', { minimum: 18, maximum: 120 }), 120, 121],
      [questions[2]!, -3.5, true],
      [questions[3]!, true, 'yes'],
      [questions[4]!, 'Retirement', '  '],
    ];
    for (const [qn, good, bad] of cases)
      it(`${qn.type}: accepts ${JSON.stringify(good)}, refuses ${JSON.stringify(bad)} at the question's loc`, () => {
        assert.doesNotThrow(() => checkAnswer(qn, good, loc));
        assert.throws(
          () => checkAnswer(qn, bad, loc),
          (error: unknown) => error instanceof InvalidField && error.loc === loc,
        );
      });

    it('refuses an unknown question id and a bad answer at ["body", "answers", <question>], changing nothing', () => {
      const a = start(undefined, q, T0);
      for (const [patch, id] of [
        [{ risk_appetite: 'HIGH' }, 'risk_appetite'],
        [{ experience: 'SOME', horizon_years: 'long' }, 'horizon_years'],
      ] as const)
        assert.throws(
          () => answer(a, patch, q),
          (error: unknown) => error instanceof InvalidField && error.loc.join('.') === `body.answers.${id}`,
        );
      assert.deepEqual(a.answers, {});
    });
  });

  describe('score bands', () => {
    const bands = [
      { min_score: 10, risk_profile_id: 'K-BALANCED' },
      { min_score: 0, risk_profile_id: 'K-DEFENSIVE' },
      { min_score: 20, risk_profile_id: 'K-DYNAMIC' },
    ];
    it('maps a score to the band with the highest min_score not above it', () => {
      assert.equal(riskProfileForScore(0, bands), 'K-DEFENSIVE');
      assert.equal(riskProfileForScore(9.9, bands), 'K-DEFENSIVE');
      assert.equal(riskProfileForScore(10, bands), 'K-BALANCED');
      assert.equal(riskProfileForScore(25, bands), 'K-DYNAMIC');
      assert.equal(riskProfileForScore(-1, bands), undefined);
    });
  });
});
