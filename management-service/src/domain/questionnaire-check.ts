import { InvalidField } from './errors.ts';
import type { Doc } from './merge.ts';

/**
 * The rules of a questionnaire beyond its contract (docs/adr/0027-assessments.md), pure: question and section ids are
 * unique, a question names a section the questionnaire has, choice questions have options (with distinct values) and
 * other types none, and only a NUMBER question has bounds, its minimum not above its maximum. Throws InvalidField at
 * the offending place of the body.
 */

type QuestionDoc = { id: string; type: string; options?: { value: string }[]; section?: string; minimum?: number; maximum?: number };

const CHOICE = new Set(['SINGLE_CHOICE', 'MULTIPLE_CHOICE']);

function firstRepeat(values: string[]): number {
  const seen = new Set<string>();
  return values.findIndex((v) => (seen.has(v) ? true : (seen.add(v), false)));
}

export function checkQuestionnaire(doc: Doc): void {
  const sections = (doc.sections ?? []) as { id: string }[];
  const questions = (doc.questions ?? []) as QuestionDoc[];
  const repeatedSection = firstRepeat(sections.map((s) => s.id));
  if (repeatedSection >= 0) throw new InvalidField(['body', 'sections', repeatedSection, 'id'], 'is the id of an earlier section');
  const repeatedQuestion = firstRepeat(questions.map((q) => q.id));
  if (repeatedQuestion >= 0) throw new InvalidField(['body', 'questions', repeatedQuestion, 'id'], 'is the id of an earlier question');
  const sectionIds = new Set(sections.map((s) => s.id));
  questions.forEach((q, i) => {
    const at = (field: string | number, ...rest: (string | number)[]) => ['body', 'questions', i, field, ...rest];
    if (q.section !== undefined && !sectionIds.has(q.section)) throw new InvalidField(at('section'), 'names no section of the questionnaire');
    if (CHOICE.has(q.type)) {
      if (q.options === undefined) throw new InvalidField(at('options'), `is required for a ${q.type} question`);
      const repeated = firstRepeat(q.options.map((o) => o.value));
      if (repeated >= 0) throw new InvalidField(at('options', repeated, 'value'), 'is the value of an earlier option');
    } else if (q.options !== undefined) throw new InvalidField(at('options'), `is only for choice questions, not ${q.type}`);
    for (const bound of ['minimum', 'maximum'] as const)
      if (q[bound] !== undefined && q.type !== 'NUMBER') throw new InvalidField(at(bound), `is only for NUMBER questions, not ${q.type}`);
    if (q.minimum !== undefined && q.maximum !== undefined && q.minimum > q.maximum) throw new InvalidField(at('maximum'), `is below the minimum ${q.minimum}`);
  });
}
