/**
 * A query and the position the interface's `invalid_query` problem names (its `position`, a
 * 0-based character offset), cut where the search box marks it. Pure.
 */
export type MarkedQuery = { before: string; at: string; after: string; atEnd: boolean };

export function markPosition(query: string, position: number): MarkedQuery {
  const at = Math.max(0, Math.min(Math.trunc(position), query.length));
  if (at >= query.length) return { before: query, at: '', after: '', atEnd: true };
  return { before: query.slice(0, at), at: query.slice(at, at + 1), after: query.slice(at + 1), atEnd: false };
}

/** The position of a problem answer, when it is an `invalid_query` that names one. */
export function queryErrorPosition(problem: { code?: unknown; position?: unknown } | undefined): number | undefined {
  if (!problem || problem.code !== 'invalid_query') return undefined;
  return typeof problem.position === 'number' && Number.isInteger(problem.position) && problem.position >= 0 ? problem.position : undefined;
}
