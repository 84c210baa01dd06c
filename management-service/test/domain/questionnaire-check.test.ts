import assert from 'node:assert/strict';
import { InvalidField } from '../../src/domain/errors.ts';
import type { Doc } from '../../src/domain/merge.ts';
import { checkQuestionnaire } from '../../src/domain/questionnaire-check.ts';
import { defaultQuestionnaire } from '../../src/domain/default-questionnaire.ts';
import { score, type Question } from '../../src/domain/assessments.ts';

const option = (value: string) => ({ value, label: { en: value }, score: 1 });
const choice = { id: 'experience', text: { en: '?' }, type: 'SINGLE_CHOICE', options: [option('NONE'), option('SOME')] };
const number = { id: 'age', text: { en: '?' }, type: 'NUMBER', minimum: 18, maximum: 120 };
const valid = { sections: [{ id: 'about_you', title: { en: 'About you' } }], questions: [{ ...choice, section: 'about_you' }, number] };

/** Expects checkQuestionnaire to refuse `doc` with an InvalidField at `loc`. */
function refusedAt(doc: Doc, loc: (string | number)[]) {
  assert.throws(
    () => checkQuestionnaire(doc),
    (error: unknown) => error instanceof InvalidField && error.loc.join('.') === loc.join('.'),
    `refused at ${loc.join('.')}`,
  );
}

describe('questionnaire rules (docs/adr/0027-assessments.md)', () => {
  it('accepts sections, choice questions with options and a NUMBER question with bounds', () => {
    assert.doesNotThrow(() => checkQuestionnaire(valid));
    assert.doesNotThrow(() => checkQuestionnaire({ questions: [{ ...number, minimum: 5, maximum: 5 }] }), 'equal bounds');
  });

  it('refuses each broken rule at its place in the body', () => {
    refusedAt({ ...valid, sections: [...valid.sections, { id: 'about_you', title: { en: 'Again' } }] }, ['body', 'sections', 1, 'id']);
    refusedAt({ questions: [choice, number, { ...number, minimum: 0 }] }, ['body', 'questions', 2, 'id']);
    refusedAt({ questions: [{ ...choice, section: 'goals' }] }, ['body', 'questions', 0, 'section']);
    refusedAt({ questions: [number, { id: 'goal', text: { en: '?' }, type: 'MULTIPLE_CHOICE' }] }, ['body', 'questions', 1, 'options']);
    refusedAt({ questions: [{ ...choice, options: [option('A'), option('B'), option('A')] }] }, ['body', 'questions', 0, 'options', 2, 'value']);
    refusedAt({ questions: [{ ...number, options: [option('A')] }] }, ['body', 'questions', 0, 'options']);
    refusedAt({ questions: [{ ...choice, minimum: 1 }] }, ['body', 'questions', 0, 'minimum']);
    refusedAt({ questions: [{ id: 'ok', text: { en: '?' }, type: 'BOOLEAN', maximum: 1 }] }, ['body', 'questions', 0, 'maximum']);
    refusedAt({ questions: [{ ...number, minimum: 10, maximum: 9 }] }, ['body', 'questions', 0, 'maximum']);
  });

  it('holds for the default questionnaire of every tenant, whose scores run from 0 to 100', () => {
    const doc = defaultQuestionnaire();
    assert.doesNotThrow(() => checkQuestionnaire(doc));
    const questions = doc.questions as Question[];
    const pick = (best: boolean) =>
      Object.fromEntries(
        questions.flatMap((q) => {
          if (!q.options) return [];
          const scores = q.options.map((o) => o.score);
          const target = best ? Math.max(...scores) : Math.min(...scores);
          const chosen = q.options.filter((o) => (q.type === 'MULTIPLE_CHOICE' && best ? o.score > 0 : o.score === target)).map((o) => o.value);
          return [[q.id, q.type === 'MULTIPLE_CHOICE' ? chosen : chosen[0]!]];
        }),
      );
    assert.equal(score(pick(true), questions), 100);
    assert.equal(score(pick(false), questions), 0);
  });
});
