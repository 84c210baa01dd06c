// The audit's allow-list (audit-allowlist.json), read without I/O: each entry lets one advisory in one
// package through, for a reason, until a date (docs/adr/0046-supply-chain.md). Anything malformed
// is named by its position, and the whole list then counts for nothing.

export type AllowEntry = {
  /** The advisory: its GitHub id (GHSA-xxxx-xxxx-xxxx) or its URL as the report gives it. */
  advisory: string;
  package: string;
  reason: string;
  /** The last day (UTC, RFC 3339 full-date) the entry holds. */
  expires: string;
};

export type AllowList = { entries: AllowEntry[]; problems: string[] };

const FIELDS = ['advisory', 'package', 'reason', 'expires'] as const;
const GHSA = /^GHSA(-[23456789cfghjmpqrvwx]{4}){3}$/;
const FULL_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Whether `text` is a calendar day written YYYY-MM-DD (2026-02-30 is not). */
export const isFullDate = (text: string): boolean =>
  FULL_DATE.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) && new Date(`${text}T00:00:00Z`).toISOString().startsWith(text);

/** `{ "entries": [ { advisory, package, reason, expires }, … ] }`, every field required, no others. */
export function parseAllowList(text: string, source: string): AllowList {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { entries: [], problems: [`${source}: not JSON (${(error as Error).message})`] };
  }
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObj(parsed) || !Array.isArray(parsed.entries)) return { entries: [], problems: [`${source}: must be an object with an array "entries"`] };
  const problems: string[] = [];
  for (const key of Object.keys(parsed)) if (key !== 'entries') problems.push(`${source}: unknown field "${key}"`);
  const entries: AllowEntry[] = [];
  parsed.entries.forEach((entry: unknown, i: number) => {
    const at = `${source}: entries[${i}]`;
    if (!isObj(entry)) return void problems.push(`${at}: must be an object`);
    const before = problems.length;
    for (const key of Object.keys(entry)) if (!(FIELDS as readonly string[]).includes(key)) problems.push(`${at}: unknown field "${key}"`);
    for (const field of FIELDS) if (typeof entry[field] !== 'string' || entry[field].trim() === '') problems.push(`${at}.${field}: must be a non-empty string`);
    if (problems.length > before) return;
    const { advisory, expires } = entry as AllowEntry;
    if (!GHSA.test(advisory) && !advisory.startsWith('https://'))
      problems.push(`${at}.advisory: "${advisory}" is neither a GitHub advisory id (GHSA-xxxx-xxxx-xxxx) nor an https URL`);
    if (!isFullDate(expires)) problems.push(`${at}.expires: "${expires}" is not a date (YYYY-MM-DD, RFC 3339)`);
    if (problems.length === before) entries.push(entry as AllowEntry);
  });
  return problems.length ? { entries: [], problems } : { entries, problems };
}
