import { build, type Api } from '@platform/test-support/fixtures';

// The table of customer-rights.test.ts: every field of every entity type's PATCH with what the owner
// and the machine client get, and how each entity under test is created.

type Owner = 'allowed' | 'refused';
export type Case = {
  /** Dotted path of the field in the PATCH body. */
  field: string;
  value: unknown;
  /** What the owner (the customer the entity belongs to) gets; 'none' when no customer may modify the type at all. */
  owner: Owner | 'none';
  /** The machine client's status when not 200 (a write-once field, a reference to nothing). */
  machine?: number;
  /** Extra fields for the entity under test at creation. */
  create?: Record<string, unknown>;
};

export type Ids = {
  owner: string;
  other: string;
  policy: string;
  policy2: string;
  goal: string;
  horizon: string;
  risk: string;
  questionnaire: string;
  questionnaire2: string;
  profile: string;
  portfolio: string;
};

export type EntityType = {
  name: string;
  patchSchema: string;
  /** Creates a fresh entity as the machine client; answers its path. */
  create: (api: Api, ids: Ids, extra: Record<string, unknown>) => Promise<string>;
  cases: (ids: Ids) => Case[];
  /** The entity is the owner itself (a user): its own token acts as the owner. */
  selfOwned?: boolean;
};

const IBAN = 'DE89370400440532013000';

export const entityTypes: EntityType[] = [
  {
    name: 'user',
    patchSchema: 'UserPatch',
    selfOwned: true,
    // The user under test is the customer itself: its own token is the "owner".
    create: async (api, _ids, extra) => `/users/${(await api('POST', '/users/', build.user(extra))).body.id}`,
    cases: () => [
      { field: 'external_id', value: 'crm-9', owner: 'refused' },
      { field: 'first_name', value: 'Grace', owner: 'allowed' },
      { field: 'last_name', value: 'Hopper', owner: 'allowed' },
      { field: 'language', value: 'de-DE', owner: 'allowed' },
      { field: 'email', value: 'grace@example.com', owner: 'refused' },
      { field: 'phone', value: '+4915112345678', owner: 'refused' },
      { field: 'counter_account', value: { bank_account_number: IBAN, bank_account_number_type: 'IBAN' }, owner: 'refused' },
      { field: 'feature_flags', value: ['ROBO_ADVISOR', 'CONSOLE'], owner: 'refused' },
      { field: 'status', value: 'ACTIVE', owner: 'refused' },
    ],
  },
  {
    name: 'robo portfolio',
    patchSchema: 'PortfolioPatch',
    create: async (api, ids, extra) =>
      `/portfolios/${(await api('POST', '/portfolios/', build.roboPortfolio(ids.owner, { policy_id: ids.policy }, { portfolio: { $EUR: 100 }, ...extra }))).body.id}`,
    cases: (ids) => {
      const setting = (key: string, value: unknown, owner: Owner, machine?: number): Case => ({
        field: `config.manager_settings.${key}`,
        value,
        owner,
        machine,
      });
      return [
        { field: 'external_id', value: 'pf-9', owner: 'refused' },
        { field: 'name', value: 'House', owner: 'allowed' },
        { field: 'owned_by_user_id', value: ids.other, owner: 'refused' },
        { field: 'owned_by_portfolio_id', value: ids.other, owner: 'refused' },
        { field: 'base_currency', value: 'USD', owner: 'refused' },
        { field: 'money_type', value: 'PAPER_MONEY', owner: 'refused', machine: 409 },
        { field: 'config.manager', value: 'ROBO_ADVISOR_ADVISORY', owner: 'refused', machine: 409 },
        { field: 'config.manager_version', value: 2, owner: 'refused' },
        setting('broker_provider', 'bank-broker', 'refused'),
        setting('active', false, 'refused'),
        setting('tags', ['growth'], 'allowed'),
        setting('background_image', 'https://img.example.com/a.png', 'allowed'),
        setting('background_color', '#112233', 'allowed'),
        setting('commission_profile', 'premium', 'refused'),
        setting('policy_id', ids.policy2, 'refused'),
        setting('goal_id', ids.goal, 'allowed'),
        setting('horizon_id', ids.horizon, 'allowed'),
        setting('risk_profile_id', ids.risk, 'refused'),
        setting('proposed_risk_profile_id', ids.risk, 'refused'),
        setting('proposed_risk_id', ids.risk, 'refused'),
        setting('risk_profile_score', 4, 'refused'),
        setting('suitability_profile_id', ids.profile, 'refused'),
        setting('divest_amount', 25.5, 'allowed'),
        setting('start_amount', 1000, 'refused'),
        setting('recurring_deposit_amount', 50, 'allowed'),
        setting('end_datetime', '2040-01-01T00:00:00.000Z', 'allowed'),
        setting('optimization_cooldown_end', '2030-01-01T00:00:00.000Z', 'refused'),
        { field: 'brokerage_account', value: { bank_account_type: 'IBAN', bank_account_number: IBAN }, owner: 'refused' },
        { field: 'portfolio', value: { $EUR: 1000000 }, owner: 'refused' },
        { field: 'funded_since', value: '2026-01-01T00:00:00.000Z', owner: 'refused' },
        { field: 'archived', value: true, owner: 'refused' },
      ];
    },
  },
  {
    name: 'transaction',
    patchSchema: 'TransactionPatch',
    create: async (api, ids, extra) => {
      const body = build.transaction({ type: 'ORDER', status: 'PLACED', instrument_id: 'IE00B4L5Y983', quantity: '2', unit_price: '100', ...extra });
      const res = await api('POST', `/portfolios/${ids.portfolio}/transactions/`, body);
      return `/portfolios/${ids.portfolio}/transactions/${res.body.id}`;
    },
    cases: () => [
      { field: 'external_id', value: 'tx-9', owner: 'refused' },
      { field: 'type', value: 'CASH', owner: 'refused' },
      { field: 'status', value: 'SETTLED', owner: 'refused' },
      { field: 'quantity', value: '3', owner: 'refused' },
      { field: 'currency', value: 'USD', owner: 'refused' },
      { field: 'instrument_id', value: 'IE00B3F81409', owner: 'refused' },
      { field: 'unit_price', value: '101.5', owner: 'refused' },
      { field: 'datetime', value: '2026-01-02T00:00:00.000Z', owner: 'refused' },
      { field: 'optimization_id', value: 'O01M80KHFCGRHVVWPCXR0XBGW3X', owner: 'refused', machine: 422 },
    ],
  },
  {
    name: 'suitability profile',
    patchSchema: 'SuitabilityProfilePatch',
    create: async (api, ids) =>
      `/suitability-profiler/profiles/${(await api('POST', '/suitability-profiler/profiles/', { user_id: ids.owner, questionnaire_id: ids.questionnaire })).body.id}`,
    cases: (ids) => [
      { field: 'external_id', value: 'sp-9', owner: 'refused' },
      { field: 'user_id', value: ids.other, owner: 'refused', machine: 409 },
      { field: 'portfolio_id', value: ids.portfolio, owner: 'refused' },
      { field: 'questionnaire_id', value: ids.questionnaire2, owner: 'refused' },
    ],
  },
  {
    name: 'goal',
    patchSchema: 'GoalPatch',
    create: async (api) => `/goals/${(await api('POST', '/goals/', { name: 'House' })).body.id}`,
    cases: () => [
      { field: 'external_id', value: 'g-9', owner: 'none' },
      { field: 'name', value: 'Boat', owner: 'none' },
      { field: 'description', value: 'a boat', owner: 'none' },
      { field: 'target_amount', value: '10000.00', owner: 'none' },
      { field: 'target_datetime', value: '2035-01-01T00:00:00.000Z', owner: 'none' },
    ],
  },
  {
    name: 'horizon',
    patchSchema: 'HorizonPatch',
    create: async (api) => `/horizons/${(await api('POST', '/horizons/', { name: 'Long', years: 10 })).body.id}`,
    cases: () => [
      { field: 'external_id', value: 'h-9', owner: 'none' },
      { field: 'name', value: 'Longer', owner: 'none' },
      { field: 'description', value: 'twenty years', owner: 'none' },
      { field: 'years', value: 20, owner: 'none' },
    ],
  },
  {
    name: 'policy',
    patchSchema: 'PolicyPatch',
    create: async (api) => `/policies/${(await api('POST', '/policies/', build.policy())).body.id}`,
    cases: () => [
      { field: 'external_id', value: 'y-9', owner: 'none' },
      { field: 'name', value: 'Bold', owner: 'none' },
      { field: 'description', value: 'more equity', owner: 'none' },
      { field: 'config.minimum_funding_amount', value: '500', owner: 'none' },
      { field: 'config.cash_buffer', value: 0.03, owner: 'none' },
      { field: 'config.rebalancing_threshold', value: 0.1, owner: 'none' },
      { field: 'config.fractional_shares', value: true, owner: 'none' },
      { field: 'config.transaction_cost_bps', value: 7, owner: 'none' },
      { field: 'config.fx_cost_bps', value: 12, owner: 'none' },
      { field: 'config.asset_class_bands', value: { EQUITY: [0.4, 0.6] }, owner: 'none' },
      { field: 'config.model_portfolio', value: { IE00B4L5Y983: 0.5 }, owner: 'none' },
    ],
  },
  {
    name: 'risk profile',
    patchSchema: 'RiskProfilePatch',
    create: async (api) => `/risk-profiles/${(await api('POST', '/risk-profiles/', { name: 'Moderate', score: 3, risk_level: 3 })).body.id}`,
    cases: (ids) => [
      { field: 'external_id', value: 'k-9', owner: 'none' },
      { field: 'name', value: 'Bold', owner: 'none' },
      { field: 'description', value: 'bolder', owner: 'none' },
      { field: 'score', value: 5, owner: 'none' },
      { field: 'risk_level', value: 5, owner: 'none' },
      { field: 'policy_id', value: ids.policy, owner: 'none' },
    ],
  },
  {
    name: 'instrument group',
    patchSchema: 'InstrumentGroupPatch',
    create: async (api) =>
      `/instrument_groups/${(await api('POST', '/instrument_groups/', { name: { en: 'Energy' }, instrument_ids: ['IE00B4L5Y983'] })).body.id}`,
    cases: () => [
      { field: 'external_id', value: 'j-9', owner: 'none' },
      { field: 'name', value: { en: 'Clean energy' }, owner: 'none' },
      { field: 'category', value: { en: 'Themes' }, owner: 'none' },
      { field: 'description', value: { en: 'Wind and sun' }, owner: 'none' },
      { field: 'image_uri', value: 'https://img.example.com/j.png', owner: 'none' },
      { field: 'instrument_ids', value: ['IE00B3F81409'], owner: 'none' },
    ],
  },
  {
    name: 'questionnaire',
    patchSchema: 'QuestionnairePatch',
    create: async (api) => `/suitability-profiler/questionnaires/${(await api('POST', '/suitability-profiler/questionnaires/', questionnaire())).body.id}`,
    cases: () => [
      { field: 'external_id', value: 'q-9', owner: 'none' },
      { field: 'name', value: 'Risk 2', owner: 'none' },
      { field: 'description', value: 'second', owner: 'none' },
      { field: 'validity_days', value: 100, owner: 'none' },
      { field: 'cooldown_days', value: 10, owner: 'none' },
      { field: 'max_attempts', value: 2, owner: 'none' },
      { field: 'questions', value: questionnaire('horizon').questions, owner: 'none' },
      { field: 'sections', value: [{ id: 'loss_tolerance', title: { en: 'Loss tolerance' } }], owner: 'none' },
    ],
  },
];

export function questionnaire(id = 'loss') {
  return {
    name: 'Risk',
    questions: [
      {
        id,
        text: { en: 'A loss of 20 %?' },
        type: 'SINGLE_CHOICE',
        options: [
          { value: 'sell', label: { en: 'Sell' }, score: 1 },
          { value: 'hold', label: { en: 'Hold' }, score: 3 },
        ],
      },
    ],
  };
}
