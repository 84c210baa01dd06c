// `npm run audit`: the known vulnerabilities of the production dependencies against the release
// policy of docs/adr/0046-supply-chain.md. Runs `npm audit --omit=dev --json` for the production
// workspaces (or reads such a report: `npm run audit -- --report <file>`), then applies the policy
// (scripts/audit/policy.ts) with the allow-list audit-allowlist.json.
// Exit status: 0 the policy passes; 1 it fails (a high or critical advisory no entry covers, an
// expired entry, a malformed allow-list); 3 no vulnerability scan could run (the registry's audit
// endpoint refused or failed), which is neither a pass nor a fail: scan the SBOM instead.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllowList } from './audit/allow-list.ts';
import { auditVerdict, verdictLines } from './audit/policy.ts';
import { readAuditOutput } from './audit/report.ts';

const root = resolve(import.meta.dirname, '..');
const ALLOW_LIST = 'audit-allowlist.json';
/** The workspaces whose dependencies the image ships; those present in this checkout are audited. */
const PRODUCTION_WORKSPACES = ['management-service', 'data-service', 'cli'];
const NO_SCAN = 3;

function npmAudit(): string {
  const workspaces = PRODUCTION_WORKSPACES.filter((dir) => existsSync(join(root, dir, 'package.json'))).flatMap((dir) => [
    '--workspace',
    (JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as { name: string }).name,
  ]);
  console.log(`npm audit --omit=dev --json ${workspaces.join(' ')}`);
  // npm exits 1 both when it finds vulnerabilities and when the registry refuses: the JSON tells.
  const run = spawnSync('npm', ['audit', '--omit=dev', '--json', ...workspaces], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error) return `npm could not be started: ${run.error.message}`;
  return run.stdout;
}

function main(): number {
  const { values } = parseArgs({ options: { report: { type: 'string' } } });
  const allowListFile = join(root, ALLOW_LIST);
  const allowList = existsSync(allowListFile) ? parseAllowList(readFileSync(allowListFile, 'utf8'), ALLOW_LIST) : { entries: [], problems: [] };
  if (allowList.problems.length) {
    for (const p of allowList.problems) console.error(p);
    console.error(`audit: fails: ${ALLOW_LIST} is malformed (fields: advisory, package, reason, expires YYYY-MM-DD)`);
    return 1;
  }
  const today = new Date().toISOString().slice(0, 10);
  const output = readAuditOutput(values.report ? readFileSync(values.report, 'utf8') : npmAudit());
  if (output.kind === 'unavailable') {
    // Expired entries need no scan to be found out.
    const expired = auditVerdict([], allowList.entries, today).expired;
    for (const line of verdictLines({ passes: false, blocking: [], allowed: [], expired, unused: [], below: [] }, ALLOW_LIST).slice(0, -1)) console.error(line);
    console.error(`audit: no vulnerability scan could run here: ${output.reason}.`);
    console.error(`audit: nothing is known about the dependencies' advisories; scan the image's SBOM (Grype, Trivy) or run where the registry answers.`);
    return expired.length ? 1 : NO_SCAN;
  }
  const verdict = auditVerdict(output.advisories, allowList.entries, today);
  for (const line of verdictLines(verdict, ALLOW_LIST)) (verdict.passes ? console.log : console.error)(line);
  return verdict.passes ? 0 : 1;
}

process.exit(main());
