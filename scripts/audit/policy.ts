import type { AllowEntry } from './allow-list.ts';
import type { Advisory } from './report.ts';

// The release policy of the dependency audit, pure (docs/adr/0046-supply-chain.md): an advisory of
// severity high or critical in the production dependencies blocks, unless an allow-list entry for
// that advisory in that package holds today; an entry past its date blocks too, whatever it covers.

export const BLOCKING = new Set(['high', 'critical']);

export type Verdict = {
  passes: boolean;
  /** High or critical advisories no entry covers. */
  blocking: Advisory[];
  /** High or critical advisories an entry that holds today covers, with it. */
  allowed: { advisory: Advisory; entry: AllowEntry }[];
  /** Entries whose last day is before today. */
  expired: AllowEntry[];
  /** Entries that hold but cover no advisory of the report (candidates for removal). */
  unused: AllowEntry[];
  /** Advisories below high, reported but not blocking. */
  below: Advisory[];
};

const covers = (entry: AllowEntry, advisory: Advisory) =>
  entry.package === advisory.package && (entry.advisory === advisory.id || entry.advisory === advisory.url);

/** `today` is the UTC day YYYY-MM-DD; an entry holds through its `expires` day. */
export function auditVerdict(advisories: readonly Advisory[], entries: readonly AllowEntry[], today: string): Verdict {
  const expired = entries.filter((e) => e.expires < today);
  const holding = entries.filter((e) => e.expires >= today);
  const blocking: Advisory[] = [];
  const allowed: Verdict['allowed'] = [];
  const used = new Set<AllowEntry>();
  for (const advisory of advisories) {
    if (!BLOCKING.has(advisory.severity)) continue;
    const entry = holding.find((e) => covers(e, advisory));
    if (entry) {
      allowed.push({ advisory, entry });
      used.add(entry);
    } else blocking.push(advisory);
  }
  return {
    passes: blocking.length === 0 && expired.length === 0,
    blocking,
    allowed,
    expired,
    unused: holding.filter((e) => !used.has(e)),
    below: advisories.filter((a) => !BLOCKING.has(a.severity)),
  };
}

/** The lines that say what the verdict is and why. */
export function verdictLines(verdict: Verdict, allowListName: string): string[] {
  const name = (a: Advisory) => `${a.severity} ${a.id} in ${a.package}: ${a.title} (${a.url})`;
  const entry = (e: AllowEntry) => `${e.advisory} in ${e.package}`;
  return [
    ...verdict.blocking.map((a) => `BLOCKS   ${name(a)}: upgrade it, or add an entry with a reason and an expiry to ${allowListName}`),
    ...verdict.expired.map((e) => `EXPIRED  ${allowListName}: ${entry(e)} held until ${e.expires} (${e.reason}): fix the dependency or renew the entry`),
    ...verdict.allowed.map(({ advisory, entry: e }) => `allowed  ${name(advisory)}, until ${e.expires}: ${e.reason}`),
    ...verdict.unused.map((e) => `unused   ${allowListName}: ${entry(e)} covers no advisory of this report; remove it`),
    ...verdict.below.map((a) => `below    ${name(a)}`),
    verdict.passes
      ? `audit: passes (${verdict.allowed.length} allowed, ${verdict.below.length} below high)`
      : `audit: fails (${verdict.blocking.length} blocking, ${verdict.expired.length} expired allow-list entries)`,
  ];
}
