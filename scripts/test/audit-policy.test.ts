import assert from 'node:assert/strict';
import { parseAllowList, type AllowEntry } from '../audit/allow-list.ts';
import { auditVerdict, verdictLines } from '../audit/policy.ts';
import { readAuditOutput, type Advisory } from '../audit/report.ts';
import { npmAuditReport } from './npm-audit-report.ts';

const TODAY = '2026-11-27';
/** A day `days` from TODAY, YYYY-MM-DD. */
const day = (days: number) => new Date(Date.parse(`${TODAY}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const entry = (advisory: string, pkg: string, expires = day(30), reason = 'not reachable: the service never parses untrusted input with it'): AllowEntry => ({
  advisory,
  package: pkg,
  reason,
  expires,
});
const advisoriesOf = (text: string): Advisory[] => {
  const output = readAuditOutput(text);
  assert.equal(output.kind, 'report', JSON.stringify(output));
  return output.kind === 'report' ? output.advisories : [];
};

describe('npm run audit: reading what npm audit printed', () => {
  it('lists each advisory once, against the package it names, with its GitHub id, URL and severity', () => {
    const report = npmAuditReport();
    const glob = report.advisory('glob', 'high', 'Command injection');
    const ws = report.advisory('ws', 'moderate');
    report.through('express', 'glob').through('knex', 'glob');
    const advisories = advisoriesOf(report.text());
    assert.deepEqual(advisories.map((a) => [a.package, a.id, a.severity]).sort(), [
      ['glob', glob.id, 'high'],
      ['ws', ws.id, 'moderate'],
    ]);
    assert.equal(advisories.find((a) => a.package === 'glob')?.url, glob.url);
    assert.equal(advisories.find((a) => a.package === 'glob')?.title, 'Command injection');
  });

  it('an empty report has no advisories', () => {
    assert.deepEqual(advisoriesOf(npmAuditReport().text()), []);
  });

  it('says why there is no report when the registry refused, npm failed, or the output is not a v2 report', () => {
    // What npm prints when the registry answers the bulk advisory request with an error.
    const refused = JSON.stringify({
      message: '405 Method Not Allowed - POST https://registry.example/-/npm/v1/security/advisories/bulk',
      statusCode: 405,
      body: '',
    });
    const cases: [string, RegExp][] = [
      [refused, /audit endpoint answered 405 Method Not Allowed/],
      [
        JSON.stringify({ error: { code: 'ENOLOCK', summary: 'This command requires an existing lockfile.' } }),
        /npm audit failed: This command requires an existing lockfile/,
      ],
      ['npm error network request failed', /no JSON report \(npm error network request failed\)/],
      ['', /no JSON report \(nothing\)/],
      [JSON.stringify({ ...(npmAuditReport().build() as object), auditReportVersion: 1 }), /format this policy does not read \(auditReportVersion 1\)/],
      ['[]', /not a report/],
    ];
    for (const [text, reason] of cases) {
      const output = readAuditOutput(text);
      assert.equal(output.kind, 'unavailable', text);
      if (output.kind === 'unavailable') assert.match(output.reason, reason);
    }
  });
});

describe('npm run audit: the allow-list', () => {
  it('reads well-formed entries, by GitHub id or URL', () => {
    const entries = [entry('GHSA-5j98-mcp5-4vw2', 'glob'), entry('https://github.com/advisories/GHSA-5j98-mcp5-4vw2', 'glob', day(0))];
    assert.deepEqual(parseAllowList(JSON.stringify({ entries }), 'audit-allowlist.json'), { entries, problems: [] });
    assert.deepEqual(parseAllowList('{"entries": []}', 'audit-allowlist.json'), { entries: [], problems: [] });
  });

  it('names every malformed field by its position, and then holds no entry at all', () => {
    const good = entry('GHSA-5j98-mcp5-4vw2', 'glob');
    const list = {
      entries: [
        good,
        { ...good, expires: '2026-02-30' },
        { ...good, expires: '2026-12-01T00:00:00Z' },
        { ...good, advisory: 'CVE-2026-1234' },
        { advisory: good.advisory, package: 'glob', expires: good.expires },
        { ...good, reason: '   ' },
        { ...good, approvedBy: 'someone' },
        'GHSA-5j98-mcp5-4vw2',
      ],
      note: 'x',
    };
    const { entries, problems } = parseAllowList(JSON.stringify(list), 'audit-allowlist.json');
    assert.deepEqual(entries, [], 'a malformed list lets nothing through');
    assert.deepEqual(problems, [
      'audit-allowlist.json: unknown field "note"',
      'audit-allowlist.json: entries[1].expires: "2026-02-30" is not a date (YYYY-MM-DD, RFC 3339)',
      'audit-allowlist.json: entries[2].expires: "2026-12-01T00:00:00Z" is not a date (YYYY-MM-DD, RFC 3339)',
      'audit-allowlist.json: entries[3].advisory: "CVE-2026-1234" is neither a GitHub advisory id (GHSA-xxxx-xxxx-xxxx) nor an https URL',
      'audit-allowlist.json: entries[4].reason: must be a non-empty string',
      'audit-allowlist.json: entries[5].reason: must be a non-empty string',
      'audit-allowlist.json: entries[6]: unknown field "approvedBy"',
      'audit-allowlist.json: entries[7]: must be an object',
    ]);
  });

  it('refuses a file that is not JSON or has no entries array', () => {
    assert.match(parseAllowList('{"entries": [', 'a.json').problems[0]!, /^a\.json: not JSON/);
    assert.deepEqual(parseAllowList('[]', 'a.json').problems, ['a.json: must be an object with an array "entries"']);
    assert.deepEqual(parseAllowList('{"entries": {}}', 'a.json').problems, ['a.json: must be an object with an array "entries"']);
  });
});

describe('npm run audit: the policy', () => {
  it('passes with no advisories, or with advisories below high only', () => {
    assert.equal(auditVerdict([], [], TODAY).passes, true);
    const report = npmAuditReport();
    report.advisory('ws', 'moderate');
    report.advisory('debug', 'low');
    const verdict = auditVerdict(advisoriesOf(report.text()), [], TODAY);
    assert.equal(verdict.passes, true);
    assert.equal(verdict.below.length, 2);
  });

  it('blocks on every high or critical advisory no entry covers', () => {
    const report = npmAuditReport();
    report.advisory('glob', 'high');
    report.advisory('tar', 'critical');
    report.advisory('ws', 'moderate');
    const verdict = auditVerdict(advisoriesOf(report.text()), [], TODAY);
    assert.equal(verdict.passes, false);
    assert.deepEqual(verdict.blocking.map((a) => a.package).sort(), ['glob', 'tar']);
  });

  it('lets an advisory through while an entry for it in that package holds, through its last day', () => {
    const report = npmAuditReport();
    const glob = report.advisory('glob', 'high');
    const tar = report.advisory('tar', 'critical');
    const advisories = advisoriesOf(report.text());
    const entries = [entry(glob.id, 'glob', day(0)), entry(tar.url, 'tar', day(90))];
    const verdict = auditVerdict(advisories, entries, TODAY);
    assert.equal(verdict.passes, true, verdictLines(verdict, 'audit-allowlist.json').join('\n'));
    assert.deepEqual(
      verdict.allowed.map(({ advisory, entry: e }) => [advisory.package, e.expires]),
      [
        ['glob', day(0)],
        ['tar', day(90)],
      ],
    );
    // The same entries the day after glob's last day: glob blocks again and its entry is named.
    const after = auditVerdict(advisories, entries, day(1));
    assert.equal(after.passes, false);
    assert.deepEqual(
      after.blocking.map((a) => a.package),
      ['glob'],
    );
    assert.deepEqual(after.expired, [entries[0]]);
  });

  it('an entry covers only its advisory in its package', () => {
    const report = npmAuditReport();
    const glob = report.advisory('glob', 'high');
    const other = report.advisory('glob', 'critical');
    const minimatch = report.advisory('minimatch', 'high');
    const elsewhere = entry(glob.id, 'minimatch');
    const verdict = auditVerdict(advisoriesOf(report.text()), [entry(glob.id, 'glob'), elsewhere], TODAY);
    assert.equal(verdict.passes, false);
    assert.deepEqual(verdict.blocking.map((a) => `${a.package} ${a.id}`).sort(), [`glob ${other.id}`, `minimatch ${minimatch.id}`]);
    assert.deepEqual(verdict.unused, [elsewhere]);
  });

  it('fails on an expired entry even when it covers nothing any more, and names it', () => {
    const stale = entry('GHSA-5j98-mcp5-4vw2', 'glob', day(-1), 'waiting for glob 11');
    const verdict = auditVerdict([], [stale], TODAY);
    assert.equal(verdict.passes, false);
    assert.deepEqual(verdict.expired, [stale]);
    const lines = verdictLines(verdict, 'audit-allowlist.json');
    assert.ok(
      lines.some((l) => l.startsWith('EXPIRED') && l.includes('GHSA-5j98-mcp5-4vw2 in glob') && l.includes(day(-1)) && l.includes('waiting for glob 11')),
      lines.join('\n'),
    );
    assert.match(lines.at(-1)!, /^audit: fails \(0 blocking, 1 expired/);
  });

  it('says which advisories block and how to let one through', () => {
    const report = npmAuditReport();
    const tar = report.advisory('tar', 'critical', 'Arbitrary file overwrite');
    const lines = verdictLines(auditVerdict(advisoriesOf(report.text()), [], TODAY), 'audit-allowlist.json');
    assert.equal(
      lines[0],
      `BLOCKS   critical ${tar.id} in tar: Arbitrary file overwrite (${tar.url}): upgrade it, or add an entry with a reason and an expiry to audit-allowlist.json`,
    );
    assert.equal(lines.at(-1), 'audit: fails (1 blocking, 0 expired allow-list entries)');
  });
});
