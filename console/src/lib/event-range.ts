/**
 * The events page's filter by time. `GET /events/` filters by subject and entity but not by time,
 * so the range is applied to the events the page reads: from (inclusive) to (exclusive), both in
 * UTC. The form's `datetime-local` fields carry no zone: the page reads them as UTC, as it shows
 * every time. Pure.
 */
export type TimeRange = { from?: number; to?: number };

/** A `datetime-local` value (`2026-11-27T09:30`, seconds optional) read as UTC; undefined when empty or not a time. */
export function utcOfLocalField(value: string | null | undefined): number | undefined {
  if (!value || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) return undefined;
  const time = Date.parse(`${value}Z`);
  return Number.isNaN(time) ? undefined : time;
}

/** The range of the form's two fields, or why it is not one. */
export function timeRange(from: string | null | undefined, to: string | null | undefined): { range: TimeRange } | { error: string } {
  const range: TimeRange = { from: utcOfLocalField(from), to: utcOfLocalField(to) };
  if (from && range.from === undefined) return { error: 'From is not a time: pick a date and time, e.g. 2026-11-27 09:30 (UTC).' };
  if (to && range.to === undefined) return { error: 'To is not a time: pick a date and time, e.g. 2026-11-27 18:00 (UTC).' };
  if (range.from !== undefined && range.to !== undefined && range.from >= range.to) return { error: 'From must be before To.' };
  return { range };
}

export function inRange(created: string, range: TimeRange): boolean {
  const time = Date.parse(created);
  if (Number.isNaN(time)) return false;
  return (range.from === undefined || time >= range.from) && (range.to === undefined || time < range.to);
}
