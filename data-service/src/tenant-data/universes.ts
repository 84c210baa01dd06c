import { parse } from 'csv-parse/sync';
import { isinProblem } from '../domain/isin.ts';
import type { Queryable } from './postgres.ts';

/**
 * A tenant's own universes in Postgres (data_universes), written by the platform team with the CLI
 * (`data universe set|remove`); replicas cache them in their `universes` table. Run inside
 * writeTenantData, which bumps the tenant's version.
 */

/** The contract's UniverseName. */
export const UNIVERSE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The ISINs of a members file: one ISIN per line, or a CSV whose header has an `ISIN` column (any
 * case). Every ISIN is checked (format and check digit); duplicates count once. Throws naming the
 * first bad lines (1 = the file's first line).
 */
export function parseUniverseMembers(text: string): string[] {
  const records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true, trim: true, info: true }) as unknown as {
    record: string[];
    info: { lines: number };
  }[];
  const column = records[0]?.record.findIndex((cell) => cell.toUpperCase() === 'ISIN') ?? -1;
  if (column < 0 && records.some((r) => r.record.length > 1))
    throw new Error('A CSV file needs a header row with an ISIN column; otherwise give one ISIN per line.');
  const problems: string[] = [];
  const isins = new Set<string>();
  for (const { record, info } of column < 0 ? records : records.slice(1)) {
    const isin = record[Math.max(column, 0)] ?? '';
    const problem = isinProblem(isin);
    if (problem) problems.push(`line ${info.lines}: ${problem}`);
    else isins.add(isin);
  }
  if (problems.length > 0)
    throw new Error(`${problems.length} bad ISIN(s), nothing written:\n${problems.slice(0, 10).join('\n')}${problems.length > 10 ? '\n…' : ''}`);
  if (isins.size === 0) throw new Error('The file names no ISIN (a universe exists while it has members; use `data universe remove` to drop one).');
  return [...isins].sort();
}

/** Makes `isins` the members of the tenant's universe `name`, replacing earlier ones; returns how many there are now. */
export async function setUniversePg(db: Queryable, tenant: string, name: string, isins: readonly string[]): Promise<number> {
  await db.query('delete from data_universes where tenant_id = $1 and universe_name = $2', [tenant, name]);
  const { rowCount } = await db.query('insert into data_universes (tenant_id, universe_name, isin) select $1, $2, unnest($3::text[])', [tenant, name, isins]);
  return rowCount ?? 0;
}

/** Drops the tenant's universe `name`; returns how many members it had. */
export async function removeUniversePg(db: Queryable, tenant: string, name: string): Promise<number> {
  return (await db.query('delete from data_universes where tenant_id = $1 and universe_name = $2', [tenant, name])).rowCount ?? 0;
}
