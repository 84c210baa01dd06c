/**
 * The collections the search page queries and where each entity of them lives in the management
 * interface, by the letter its id starts with (contracts/management.openapi.yaml). Pure.
 */
import type { components } from '@platform/api-types/management';

type Schemas = components['schemas'];

/** The quick filters a collection offers, each compiled to a term of the query language (lib/list-query.ts). */
export type QuickFilterSpec = {
  /** The values of `status`, when the collection has one. */
  status?: readonly string[];
  /** The values of `config.manager` (portfolios). */
  manager?: readonly string[];
  /** The values of `money_type` (portfolios). */
  moneyType?: readonly string[];
  /** The fields the free text is looked for in (contains, as the query language's `'*text*'`). */
  text: readonly string[];
};

export type Collection = {
  key: string;
  label: string;
  /** Collection root, with the trailing slash the contract lists. */
  path: string;
  letter: string;
  /** Fields shown as columns of the results, beside the id, creation time, version and last change. */
  columns: string[];
  /**
   * Reference fields among the columns, asked for with `embed` so that one call answers the page
   * and the names of the entities it points to (never one call per row).
   */
  references: string[];
  filters: QuickFilterSpec;
};

const PORTFOLIO_STATUSES = [
  'WAITING_FOR_ACCOUNT',
  'WAITING_FOR_POLICY',
  'WAITING_FOR_FUNDS',
  'ACTIVE',
  'INACTIVE',
] as const satisfies readonly Schemas['PortfolioStatus'][];
const USER_STATUSES = [
  'WAITING_FOR_VERIFICATION',
  'VERIFICATION_FAILED',
  'WAITING_FOR_SIGNATURE',
  'ACTIVE',
  'INACTIVE',
] as const satisfies readonly Schemas['UserStatus'][];
const MANAGERS = ['USER_MANAGED', 'ROBO_ADVISOR_ADVISORY', 'ROBO_ADVISOR_DISCRETIONARY'] as const satisfies readonly Schemas['PortfolioManager'][];
const MONEY_TYPES = ['REAL_MONEY', 'PAPER_MONEY'] as const satisfies readonly Schemas['MoneyType'][];

// A value the contract adds to an enum fails the type check here until the list names it.
type Complete<All, Listed> = [Exclude<All, Listed>] extends [never] ? true : never;
const complete: [
  Complete<Schemas['PortfolioStatus'], (typeof PORTFOLIO_STATUSES)[number]>,
  Complete<Schemas['UserStatus'], (typeof USER_STATUSES)[number]>,
  Complete<Schemas['PortfolioManager'], (typeof MANAGERS)[number]>,
  Complete<Schemas['MoneyType'], (typeof MONEY_TYPES)[number]>,
] = [true, true, true, true];
void complete;

const NAMED = { text: ['name', 'external_id'] } as const;

export const COLLECTIONS: Collection[] = [
  {
    key: 'portfolios',
    label: 'Portfolios',
    path: '/portfolios/',
    letter: 'P',
    columns: ['name', 'external_id', 'status', 'config.manager', 'money_type', 'owned_by_user_id', 'config.manager_settings.policy_id'],
    references: ['owned_by_user_id', 'config.manager_settings.policy_id'],
    filters: { status: PORTFOLIO_STATUSES, manager: MANAGERS, moneyType: MONEY_TYPES, text: ['name', 'external_id'] },
  },
  {
    key: 'users',
    label: 'Users',
    path: '/users/',
    letter: 'U',
    columns: ['first_name', 'last_name', 'email', 'external_id', 'status'],
    references: [],
    filters: { status: USER_STATUSES, text: ['first_name', 'last_name', 'email', 'external_id'] },
  },
  { key: 'policies', label: 'Policies', path: '/policies/', letter: 'Y', columns: ['name', 'external_id'], references: [], filters: NAMED },
  { key: 'goals', label: 'Goals', path: '/goals/', letter: 'L', columns: ['name', 'external_id'], references: [], filters: NAMED },
  { key: 'horizons', label: 'Horizons', path: '/horizons/', letter: 'H', columns: ['name', 'external_id'], references: [], filters: NAMED },
  {
    key: 'risk-profiles',
    label: 'Risk profiles',
    path: '/risk-profiles/',
    letter: 'K',
    columns: ['name', 'external_id', 'policy_id'],
    references: ['policy_id'],
    filters: NAMED,
  },
  {
    key: 'instrument_groups',
    label: 'Instrument groups',
    path: '/instrument_groups/',
    letter: 'J',
    columns: ['name', 'external_id'],
    references: [],
    filters: NAMED,
  },
  {
    key: 'profiles',
    label: 'Suitability profiles',
    path: '/suitability-profiler/profiles/',
    letter: 'N',
    columns: ['external_id', 'user_id', 'portfolio_id', 'questionnaire_id'],
    references: ['user_id', 'portfolio_id', 'questionnaire_id'],
    filters: { text: ['external_id'] },
  },
  {
    key: 'questionnaires',
    label: 'Questionnaires',
    path: '/suitability-profiler/questionnaires/',
    letter: 'Q',
    columns: ['name', 'external_id'],
    references: [],
    filters: NAMED,
  },
];

export const collectionByKey = (key: string | null | undefined) => COLLECTIONS.find((c) => c.key === key);

const ID = /^[A-Z][0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether `value` is an id of the interface (a letter and a ULID). */
export const isEntityId = (value: unknown): value is string => typeof value === 'string' && ID.test(value);

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
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, step)) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}

/**
 * What a person calls an entity: a user by first and last name (else the e-mail), any other by its
 * name, else its external id; undefined when it has none of these.
 */
export function entityName(doc: unknown): string | undefined {
  const text = (path: string) => {
    const value = valueAt(doc, path);
    return typeof value === 'string' && value.trim() ? value.trim() : undefined;
  };
  const person = [text('first_name'), text('last_name')].filter(Boolean).join(' ');
  return person || text('name') || text('email') || text('external_id');
}
