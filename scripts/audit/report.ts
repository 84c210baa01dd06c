// What `npm audit --json` printed, read without I/O: the advisories of a report (npm's v2 format),
// or why no report came (the registry's audit endpoint refused or failed).

export const SEVERITIES = ['info', 'low', 'moderate', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** One advisory against one vulnerable package (an object of a vulnerability's `via`). */
export type Advisory = {
  /** The GitHub advisory id (GHSA-…) when the URL names one, otherwise npm's source number. */
  id: string;
  url: string;
  package: string;
  title: string;
  severity: Severity;
};

export type AuditOutput = { kind: 'report'; advisories: Advisory[] } | { kind: 'unavailable'; reason: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The advisories of a v2 report, each once, or why the output is not a report. */
export function readAuditOutput(stdout: string): AuditOutput {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return { kind: 'unavailable', reason: `npm audit printed no JSON report (${stdout.trim().slice(0, 120) || 'nothing'})` };
  }
  if (!isObj(parsed)) return { kind: 'unavailable', reason: 'npm audit printed JSON that is not a report' };
  // A refused request: npm prints the registry's answer (message, statusCode) instead of a report.
  if (typeof parsed.statusCode === 'number' || typeof parsed.message === 'string')
    return { kind: 'unavailable', reason: `the registry's audit endpoint answered ${String(parsed.message ?? parsed.statusCode)}` };
  if (isObj(parsed.error))
    return { kind: 'unavailable', reason: `npm audit failed: ${String(parsed.error.summary || parsed.error.code || 'no reason given')}` };
  if (parsed.auditReportVersion !== 2 || !isObj(parsed.vulnerabilities))
    return {
      kind: 'unavailable',
      reason: `npm audit printed a report of a format this policy does not read (auditReportVersion ${String(parsed.auditReportVersion)})`,
    };
  const advisories = new Map<string, Advisory>();
  for (const [name, vulnerability] of Object.entries(parsed.vulnerabilities)) {
    if (!isObj(vulnerability) || !Array.isArray(vulnerability.via)) continue;
    // A string in `via` names another vulnerable package, whose own entry holds the advisory.
    for (const via of vulnerability.via.filter(isObj)) {
      const url = String(via.url ?? '');
      // A severity this policy does not know counts as critical: it fails closed.
      const severity = SEVERITIES.find((s) => s === via.severity) ?? 'critical';
      const id = /\/(GHSA(?:-[0-9a-z]{4}){3})$/.exec(url)?.[1] ?? String(via.source);
      const advisory = { id, url, package: typeof via.name === 'string' ? via.name : name, title: String(via.title ?? ''), severity };
      advisories.set(`${advisory.package}\0${id}`, advisory);
    }
  }
  return { kind: 'report', advisories: [...advisories.values()] };
}
