/**
 * Calendar of a simulation: dates as whole days since 1970-01-01 (UTC), frequencies stepping from
 * the start date. A monthly or yearly step keeps the start date's day of the month and falls back to
 * the month's last day where that day does not exist (start 2022-01-31: 02-28, 03-31, 04-30, …),
 * always counted from the start date, never from the previous (shortened) date.
 */

export type Frequency = 'D' | 'W' | 'M' | 'Y';
export const FREQUENCIES: readonly Frequency[] = ['D', 'W', 'M', 'Y'];

/** Days per year of the model's clock: Δt of a step is its calendar days / 365.25. */
export const DAYS_PER_YEAR = 365.25;

const MS_PER_DAY = 86_400_000;

/** `YYYY-MM-DD` → day number, or undefined when it is not a real date. */
export function parseDay(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return ms / MS_PER_DAY;
}

/** Day number → `YYYY-MM-DD`. */
export function formatDay(day: number): string {
  return new Date(day * MS_PER_DAY).toISOString().slice(0, 10);
}

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

/** The `k`-th date of `frequency` counted from `start` (k = 0 is the start). */
export function nthDate(start: number, frequency: Frequency, k: number): number {
  if (frequency === 'D') return start + k;
  if (frequency === 'W') return start + 7 * k;
  const s = new Date(start * MS_PER_DAY);
  const months = frequency === 'M' ? k : 12 * k;
  const total = s.getUTCMonth() + months;
  const year = s.getUTCFullYear() + Math.floor(total / 12);
  const month = ((total % 12) + 12) % 12;
  const day = Math.min(s.getUTCDate(), daysInMonth(year, month));
  return Date.UTC(year, month, day) / MS_PER_DAY;
}

/** Every date of `frequency` from `start` up to and including `end`. */
export function datesUpTo(start: number, end: number, frequency: Frequency): number[] {
  const dates: number[] = [];
  for (let k = 0; ; k++) {
    const d = nthDate(start, frequency, k);
    if (d > end) return dates;
    dates.push(d);
  }
}
