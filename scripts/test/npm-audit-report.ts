import type { Severity } from '../audit/report.ts';

// Builds what `npm audit --json` prints (its v2 report): each vulnerable package with the
// advisories against it in `via`, packages vulnerable through another naming it as a string, and
// the counts of `metadata`, so that a test states only the advisories it is about.

type Via = { source: number; name: string; dependency: string; title: string; url: string; severity: Severity; cwe: string[]; cvss: object; range: string };
type Vulnerability = {
  name: string;
  severity: Severity;
  isDirect: boolean;
  via: (Via | string)[];
  effects: string[];
  range: string;
  nodes: string[];
  fixAvailable: boolean;
};

const RANK: Severity[] = ['info', 'low', 'moderate', 'high', 'critical'];
const GHSA_LETTERS = '23456789cfghjmpqrvwx';

export class NpmAuditReportBuilder {
  private readonly vulnerabilities = new Map<string, Vulnerability>();
  private advisories = 0;

  /** An advisory against `pkg`; returns its GitHub id and URL so that an allow-list can name it. */
  advisory(pkg: string, severity: Severity, title = `${severity} flaw in ${pkg}`): { id: string; url: string } {
    const n = ++this.advisories;
    const group = (k: number) => Array.from({ length: 4 }, (_, i) => GHSA_LETTERS[(n * 7 + k * 5 + i * 3) % GHSA_LETTERS.length]).join('');
    const id = `GHSA-${group(1)}-${group(2)}-${group(3)}`;
    const url = `https://github.com/advisories/${id}`;
    const via: Via = { source: 1_100_000 + n, name: pkg, dependency: pkg, title, url, severity, cwe: ['CWE-400'], cvss: { score: 7.5 }, range: '<1.2.3' };
    this.entry(pkg).via.push(via);
    return { id, url };
  }

  /** `pkg` is vulnerable only through its dependency `through` (which needs advisories of its own). */
  through(pkg: string, through: string): this {
    this.entry(pkg).via.push(through);
    this.entry(through).effects.push(pkg);
    return this;
  }

  build(): object {
    const vulnerabilities = Object.fromEntries(
      [...this.vulnerabilities].map(([name, v]) => [name, { ...v, severity: this.severityOf(name, new Set()) }] as const),
    );
    const counts = Object.fromEntries(RANK.map((s) => [s, Object.values(vulnerabilities).filter((v) => v.severity === s).length]));
    return {
      auditReportVersion: 2,
      vulnerabilities,
      metadata: {
        vulnerabilities: { ...counts, total: Object.keys(vulnerabilities).length },
        dependencies: { prod: 180, dev: 0, optional: 12, peer: 0, peerOptional: 0, total: 192 },
      },
    };
  }

  text(): string {
    return JSON.stringify(this.build(), null, 2);
  }

  private entry(name: string): Vulnerability {
    let v = this.vulnerabilities.get(name);
    if (!v) {
      v = { name, severity: 'info', isDirect: false, via: [], effects: [], range: '*', nodes: [`node_modules/${name}`], fixAvailable: true };
      this.vulnerabilities.set(name, v);
    }
    return v;
  }

  /** A package's severity is the highest of its advisories and of the packages it is vulnerable through. */
  private severityOf(name: string, seen: Set<string>): Severity {
    seen.add(name);
    const v = this.vulnerabilities.get(name)!;
    const ranks = v.via.map((via) => (typeof via === 'string' ? (seen.has(via) ? 0 : RANK.indexOf(this.severityOf(via, seen))) : RANK.indexOf(via.severity)));
    return RANK[Math.max(0, ...ranks)]!;
  }
}

export const npmAuditReport = () => new NpmAuditReportBuilder();
