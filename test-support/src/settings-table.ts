import { readFileSync } from 'node:fs';

/** The services named in the first column of docs/configuration.md's table of settings. */
export type DocumentedService = 'management' | 'data';

const TABLE_HEADER = '| service | setting | default | meaning |';

/**
 * The settings docs/configuration.md documents for one service, each with whether it is marked ★
 * (a secret that may come from `<NAME>_FILE`). Only the table under TABLE_HEADER counts: the
 * variables of `npm start` are listed apart from it, on purpose.
 */
export function documentedSettings(markdown: string, service: DocumentedService): Map<string, { secret: boolean }> {
  const lines = markdown.split('\n');
  const start = lines.indexOf(TABLE_HEADER);
  if (start < 0) throw new Error(`docs/configuration.md has no table headed ${TABLE_HEADER}`);
  const found = new Map<string, { secret: boolean }>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [who, setting] = line
      .split('|')
      .slice(1, 3)
      .map((cell) => cell.trim());
    if (who !== service && who !== 'both') continue;
    // A cell may name several variables (`OIDC_ISSUER`, `OIDC_AUDIENCE`); ★ follows the secret one.
    for (const match of setting!.matchAll(/`([A-Z][A-Z0-9_]*)`( ★)?/g)) {
      if (found.has(match[1]!)) throw new Error(`${match[1]} is in the table twice for the ${service} service`);
      found.set(match[1]!, { secret: match[2] !== undefined });
    }
  }
  return found;
}

/** docs/configuration.md of this checkout. */
export const configurationPage = (): string => readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/**
 * What differs between a service's settings (`{NAME: {description, secret?}}`, as its config module declares them)
 * and the table: names missing from either side, and secrets marked on one side only.
 */
export function settingsDrift(settings: Record<string, { description: string; secret?: boolean }>, documented: Map<string, { secret: boolean }>): string[] {
  const drift: string[] = [];
  for (const [name, setting] of Object.entries(settings)) {
    const row = documented.get(name);
    if (!row) drift.push(`${name} is read by the service but not in the table`);
    else if (row.secret !== (setting.secret === true))
      drift.push(`${name} is ${setting.secret ? '' : 'not '}a secret but ${row.secret ? 'marked' : 'not marked'} ★`);
  }
  for (const name of documented.keys()) if (!Object.hasOwn(settings, name)) drift.push(`${name} is in the table but the service does not read it`);
  return drift;
}
