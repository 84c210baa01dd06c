/**
 * Weeks and months of day numbers (days since 1970-01-01, as in `simulation/dates.ts`), compared to
 * find the last business day of a period and the first of a month.
 */

/** Monday-based week number: day 4 (1970-01-05) was a Monday. */
export const weekOf = (day: number): number => Math.floor((day + 3) / 7);

/** Months since year 0. */
export function monthOf(day: number): number {
  const d = new Date(day * 86_400_000);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}
