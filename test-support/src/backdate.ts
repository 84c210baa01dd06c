import type { Knex } from 'knex';

// A portfolio's history (docs/adr/0058-portfolio-history.md) is computed over the days its versions
// and cash moves are dated, and the reference data has closes only up to its last business day: a
// test that wants a history over past business days writes its portfolio as usual, then moves its
// versions and cash moves into the sample's past with this.

const DAY_MS = 86_400_000;

export type DatedVersion = { version: number; day: number; holdings: Record<string, number> };

/**
 * Dates version k of the portfolio at noon UTC of `days[k]` (the last day for any later version),
 * and each of its transactions on the day of the version that booked it: the first version
 * written at or after the transaction's own time (the last version when none is). Days are days
 * since 1970-01-01, ascending. Returns the versions as dated, oldest first.
 */
export async function backdatePortfolio(db: Knex, tenantId: string, portfolioId: string, days: readonly number[]): Promise<DatedVersion[]> {
  if (days.length === 0) throw new Error('backdatePortfolio needs at least one day');
  const noon = (day: number) => new Date((day + 0.5) * DAY_MS);
  const stored = (await db('entity_versions').select('version', 'version_at', 'doc').where({ tenant_id: tenantId, id: portfolioId }).orderBy('version')) as {
    version: number;
    version_at: Date;
    doc: { portfolio?: Record<string, number> };
  }[];
  const moves = (await db('entities').select('id', 'doc').where({ tenant_id: tenantId, parent_id: portfolioId, type: 'transactions' })) as {
    id: string;
    doc: { datetime: string };
  }[];
  const dayOfVersion = stored.map((_, k) => days[Math.min(k, days.length - 1)]!);
  // Matched on the times as written, before any of them moves.
  const moveDays = moves.map((move) => {
    const k = stored.findIndex((row) => new Date(row.version_at).getTime() >= Date.parse(move.doc.datetime));
    return dayOfVersion[k === -1 ? stored.length - 1 : k]!;
  });
  for (const [k, row] of stored.entries()) {
    await db('entity_versions')
      .where({ tenant_id: tenantId, id: portfolioId, version: row.version })
      .update({ version_at: noon(dayOfVersion[k]!) });
  }
  for (const [i, move] of moves.entries()) {
    await db('entities')
      .where({ tenant_id: tenantId, id: move.id })
      .update({ doc: db.raw("jsonb_set(doc, '{datetime}', to_jsonb(?::text))", [noon(moveDays[i]!).toISOString()]) });
  }
  return stored.map((row, k) => ({ version: row.version, day: dayOfVersion[k]!, holdings: row.doc.portfolio ?? {} }));
}

/** The weekdays (days since 1970-01-01) from `first` to `last`, both included. */
export function weekdaysBetween(first: number, last: number): number[] {
  const days: number[] = [];
  for (let day = first; day <= last; day++) if (![0, 6].includes(new Date(day * DAY_MS).getUTCDay())) days.push(day);
  return days;
}
