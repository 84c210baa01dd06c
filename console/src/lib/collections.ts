/**
 * The collections the search page queries and where each entity of them lives in the management
 * interface, by the letter its id starts with (contracts/management.openapi.yaml). Pure.
 */
export type Collection = {
  key: string;
  label: string;
  /** Collection root, with the trailing slash the contract lists. */
  path: string;
  letter: string;
  /** Fields shown as columns of the results, beside the id, status and version. */
  columns: string[];
};

export const COLLECTIONS: Collection[] = [
  { key: 'portfolios', label: 'Portfolios', path: '/portfolios/', letter: 'P', columns: ['name', 'status', 'config.manager', 'owned_by_user_id'] },
  { key: 'users', label: 'Users', path: '/users/', letter: 'U', columns: ['first_name', 'last_name', 'email', 'status'] },
  { key: 'policies', label: 'Policies', path: '/policies/', letter: 'Y', columns: ['name'] },
  { key: 'goals', label: 'Goals', path: '/goals/', letter: 'L', columns: ['name'] },
  { key: 'horizons', label: 'Horizons', path: '/horizons/', letter: 'H', columns: ['name'] },
  { key: 'risk-profiles', label: 'Risk profiles', path: '/risk-profiles/', letter: 'K', columns: ['name'] },
  { key: 'instrument_groups', label: 'Instrument groups', path: '/instrument_groups/', letter: 'J', columns: ['name'] },
  { key: 'profiles', label: 'Suitability profiles', path: '/suitability-profiler/profiles/', letter: 'N', columns: ['owned_by_user_id'] },
  { key: 'questionnaires', label: 'Questionnaires', path: '/suitability-profiler/questionnaires/', letter: 'Q', columns: ['name'] },
];

export const collectionByKey = (key: string | null | undefined) => COLLECTIONS.find((c) => c.key === key);

const ID = /^[A-Z][0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * The interface's path of the entity with this id (`parent`: the portfolio of a transaction), or
 * undefined for an id the console cannot place.
 */
export function entityPath(id: string, parent?: string): string | undefined {
  if (!ID.test(id)) return undefined;
  const letter = id[0];
  if (letter === 'T') return parent && ID.test(parent) ? `/portfolios/${parent}/transactions/${id}` : undefined;
  if (letter === 'O') return `/optimizations/${id}`;
  const collection = COLLECTIONS.find((c) => c.letter === letter);
  return collection ? `${collection.path}${id}` : undefined;
}

/** Whether the entity keeps a version log (`…/versions/`): every kind but optimizations. */
export const hasVersions = (id: string) => id[0] !== 'O';

/** The value at a dotted path (`config.manager`), or undefined. */
export function valueAt(doc: unknown, dotted: string): unknown {
  let value: unknown = doc;
  for (const step of dotted.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}
