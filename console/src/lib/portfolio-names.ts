/**
 * Names beside portfolio ids in the event feed, read in one collection query per poll rather than
 * one request per row. Pure.
 */
const PORTFOLIO_ID = /^P[0-9A-HJKMNP-TV-Z]{26}$/;
/** The interface's largest page. */
export const NAMES_PER_QUERY = 100;

/** The portfolio an event is about: its own id, or the portfolio of its optimization or notification. */
export function portfolioOfEvent(data: Record<string, unknown> | undefined): string | undefined {
  for (const value of [data?.id, data?.portfolio_id]) if (typeof value === 'string' && PORTFOLIO_ID.test(value)) return value;
  return undefined;
}

/**
 * The query of the names of up to NAMES_PER_QUERY portfolios; undefined when none is left. Only ids
 * of the portfolio form go in, so none can close the quotes.
 */
export function namesQuery(ids: Iterable<string>): string | undefined {
  const valid = [...new Set(ids)].filter((id) => PORTFOLIO_ID.test(id)).slice(0, NAMES_PER_QUERY);
  return valid.length ? `id in [${valid.map((id) => `'${id}'`).join(', ')}] select name` : undefined;
}
