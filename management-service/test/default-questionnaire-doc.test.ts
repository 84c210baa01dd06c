import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Question } from '../src/domain/assessments.ts';
import { defaultQuestionnaire } from '../src/domain/default-questionnaire.ts';

/** The page that documents the default questionnaire lists what the code creates: each question, its section, type and option scores. */
describe('docs/default-questionnaire.md', () => {
  const page = readFileSync('docs/default-questionnaire.md', 'utf8');
  const rows = new Map(
    [...page.matchAll(/^\| ([a-z_]+) \| `([a-z_]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => [
      m[2]!,
      { section: m[1]!, type: m[3]!.trim(), options: m[4]!.trim() },
    ]),
  );

  it('has one row per question, with its section, type and every option with its score', () => {
    const questions = defaultQuestionnaire().questions as (Question & { section: string })[];
    assert.deepEqual([...rows.keys()].sort(), questions.map((q) => q.id).sort());
    for (const q of questions) {
      const row = rows.get(q.id)!;
      assert.equal(row.section, q.section, q.id);
      assert.ok(row.type.startsWith(q.type), `${q.id}: ${row.type}`);
      if (q.options) assert.equal(row.options, q.options.map((o) => `${o.value} ${o.score}`).join(', '), q.id);
      else assert.equal(row.options, '(no score)', q.id);
    }
  });
});
