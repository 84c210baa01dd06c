import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const root = new URL('../../', import.meta.url);
const adrDir = new URL('docs/adr/', root);
const RECORD = /^(\d{4})-[a-z0-9-]+\.md$/;

/**
 * The fields every decision record carries (the format of docs/adr/README.md): a status, the date
 * it was first committed, and either Context / Decision / Consequences or Rule / Why / Rejected /
 * Consequences, each as a paragraph that begins with its bold name. Returns what is missing.
 */
function structureProblems(file: string, text: string, known: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const number = RECORD.exec(file)?.[1];
  if (!number) return [`${file}: not named NNNN-words.md`];
  const lines = text.split('\n');
  if (!lines[0]?.startsWith(`# ${number} — `)) problems.push(`${file}: the title does not begin with "# ${number} — "`);
  const status = /^- \*\*Status:\*\* (.*)$/m.exec(text)?.[1];
  if (status === undefined) problems.push(`${file}: no "- **Status:** …" line`);
  else if (status !== 'Accepted') {
    const superseded = /^Superseded by \[[^\]]+\]\((\d{4}-[a-z0-9-]+\.md)\)$/.exec(status);
    if (!superseded) problems.push(`${file}: the status is neither "Accepted" nor "Superseded by [NNNN …](NNNN-….md)"`);
    else if (!known.has(superseded[1]!)) problems.push(`${file}: superseded by ${superseded[1]}, which is not a record`);
  }
  const date = /^- \*\*Date:\*\* (\d{4}-\d{2}-\d{2})$/m.exec(text)?.[1];
  if (date === undefined) problems.push(`${file}: no "- **Date:** YYYY-MM-DD" line`);
  else if (Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date)
    problems.push(`${file}: ${date} is not a date`);
  const has = (name: string) => new RegExp(`^\\*\\*${name}\\.\\*\\*`, 'm').test(text);
  const contextForm = ['Context', 'Decision', 'Consequences'];
  const ruleForm = ['Rule', 'Why', 'Rejected', 'Consequences'];
  const form = has('Rule') ? ruleForm : contextForm;
  for (const name of form) if (!has(name)) problems.push(`${file}: no "**${name}.**" paragraph`);
  return problems;
}

/** The day each record was first committed, by file name (records not yet committed are absent). */
async function firstCommitDays(): Promise<Map<string, string>> {
  const { stdout } = await promisify(execFile)('git', ['log', '--diff-filter=A', '--format=%as', '--name-only', '--', 'docs/adr/'], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  const days = new Map<string, string>();
  let day = '';
  // Newest first: the last day seen for a file is its first commit.
  for (const line of stdout.split('\n')) {
    if (/^\d{4}-\d{2}-\d{2}$/.test(line)) day = line;
    else if (line.startsWith('docs/adr/')) days.set(line.slice('docs/adr/'.length), day);
  }
  return days;
}

describe('decision records', function () {
  this.timeout(60_000);

  it('each has a status, the date of its first commit, and the sections of its form', async () => {
    const files = (await readdir(adrDir)).filter((file) => RECORD.test(file)).sort();
    assert.ok(files.length > 0, 'docs/adr/ holds records');
    const known = new Set(files);
    const days = await firstCommitDays();
    const problems: string[] = [];
    for (const file of files) {
      const text = await readFile(new URL(file, adrDir), 'utf8');
      problems.push(...structureProblems(file, text, known));
      const date = /^- \*\*Date:\*\* (\S+)$/m.exec(text)?.[1];
      const first = days.get(file);
      if (date && first && date !== first) problems.push(`${file}: dated ${date}, first committed ${first}`);
    }
    assert.deepEqual(problems, [], problems.join('\n'));
  });

  it('the index of docs/adr/README.md lists every record once, and nothing else', async () => {
    const files = (await readdir(adrDir)).filter((file) => RECORD.test(file)).sort();
    const index = await readFile(new URL('README.md', adrDir), 'utf8');
    const listed = [...index.matchAll(/^\| \[(\d{4}-[a-z0-9-]+\.md)\]\(\1\) \|/gm)].map((m) => m[1]!);
    assert.deepEqual(listed, files);
  });

  it('names what a record lacks', () => {
    const known = new Set(['0001-a.md', '0002-b.md']);
    const whole = '# 0002 — B\n\n- **Status:** Accepted\n- **Date:** 2026-11-23\n\n**Rule.** r\n\n**Why.** w\n\n**Rejected.** x\n\n**Consequences.** c\n';
    assert.deepEqual(structureProblems('0002-b.md', whole, known), []);
    const context =
      '# 0001 — A\n\n- **Status:** Superseded by [0002](0002-b.md)\n- **Date:** 2026-11-23\n\n**Context.** c\n\n**Decision.** d\n\n**Consequences.** c\n';
    assert.deepEqual(structureProblems('0001-a.md', context, known), []);
    assert.deepEqual(structureProblems('0002-b.md', whole.replace('**Rejected.** x\n\n', '').replace('2026-11-23', '2026-02-30'), known), [
      '0002-b.md: 2026-02-30 is not a date',
      '0002-b.md: no "**Rejected.**" paragraph',
    ]);
    assert.deepEqual(structureProblems('0002-b.md', whole.replace('- **Status:** Accepted\n', '').replace('**Consequences.** c\n', ''), known), [
      '0002-b.md: no "- **Status:** …" line',
      '0002-b.md: no "**Consequences.**" paragraph',
    ]);
    assert.deepEqual(structureProblems('0001-a.md', context.replace('0002-b.md)', '0003-c.md)').replace('# 0001', '# 0009'), known), [
      '0001-a.md: the title does not begin with "# 0001 — "',
      '0001-a.md: superseded by 0003-c.md, which is not a record',
    ]);
  });
});
