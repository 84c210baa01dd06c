import { fromNumber, toText } from '@platform/shared';
import { InvalidField, WriteOnceField } from '../errors.ts';
import { checkClientCreate, checkClientDelete, checkClientUpdate } from '../fx-transactions.ts';
import { checkQuestionnaire } from '../questionnaire-check.ts';
import { jsonEqual, mergePatch, type Doc, type Json } from '../merge.ts';
import type { EntityKind, Reference, WriteContext } from './kind.ts';
import { portfolios } from './portfolios.ts';
import { users } from './users.ts';
import { policyEffects } from './policy-effects.ts';
import { suitabilityProfileEffects } from './suitability-profile-effects.ts';
import { str } from './kind.ts';

type Simple = {
  type: string;
  letter: EntityKind['letter'];
  label: string;
  path: string;
  idParam: string;
  /** Operation id stem: createGoal, getGoal, … listGoalVersions; also the contract's schema name. */
  name: string;
  /** listGoals; default: the stem and an s. */
  plural?: string;
  defaults: Doc;
  /** Fields that cannot change once set (409 write_once_field). */
  writeOnce?: string[];
  /** Values a PATCH replaces whole (lists are always replaced). */
  whole?: string[];
  references?: [field: string, type: string][];
  check?: (doc: Doc) => void;
  parent?: EntityKind['parent'];
  finish?: (doc: Doc, ctx: WriteContext) => Doc;
  access?: EntityKind['access'];
  effects?: EntityKind['effects'];
  clientWrites?: EntityKind['clientWrites'];
};

const none = { readable_by: [], modifiable_by: [] };

/** An entity type whose rules are defaults, references and a check: most of the catalogue. */
function simpleKind(s: Simple): EntityKind {
  const whole = new Set(s.whole ?? []);
  const finish = (doc: Doc, ctx: WriteContext) => {
    const out = { external_id: null, ...s.defaults, ...doc };
    s.check?.(out);
    return s.finish ? s.finish(out, ctx) : out;
  };
  return {
    type: s.type,
    letter: s.letter,
    label: s.label,
    path: s.path,
    idParam: s.idParam,
    parent: s.parent,
    operations: {
      create: `create${s.name}`,
      get: `get${s.name}`,
      update: `update${s.name}`,
      delete: `delete${s.name}`,
      versions: `list${s.name}Versions`,
      list: `list${s.plural ?? `${s.name}s`}`,
    },
    schema: s.name,
    embeddable: [...(s.references ?? []).map(([field]) => field), ...(s.parent ? [`${s.parent.type.replace(/s$/, '')}_id`] : [])],
    create: (body, ctx) => finish(body, ctx),
    update: (current, body, ctx) => {
      for (const field of s.writeOnce ?? []) {
        if (Object.hasOwn(body, field) && current[field] !== undefined && current[field] !== null && !jsonEqual(body[field], current[field]))
          throw new WriteOnceField(['body', field]);
      }
      return finish(mergePatch(current, body, whole), ctx);
    },
    // Rows written before a default existed answer with it.
    read: (doc) => ({ external_id: null, ...s.defaults, ...doc }),
    references: (doc) =>
      (s.references ?? []).flatMap(([field, type]): Reference[] => {
        const id = str(doc[field]);
        return id ? [{ loc: ['body', field], id, type }] : [];
      }),
    access: s.access ?? (() => none),
    effects: s.effects,
    clientWrites: s.clientWrites,
  };
}

/** Money and quantities are exact decimal text in storage and answers, whichever way they came. */
const decimalText = (value: Json | undefined): Json => (typeof value === 'number' ? toText(fromNumber(value)) : (value ?? null));

export const goals = simpleKind({
  type: 'goals',
  path: '/goals/',
  letter: 'L',
  label: 'goal',
  idParam: 'goal_id',
  name: 'Goal',
  defaults: { description: null, target_amount: null, target_datetime: null },
});

export const horizons = simpleKind({
  type: 'horizons',
  path: '/horizons/',
  letter: 'H',
  label: 'horizon',
  idParam: 'horizon_id',
  name: 'Horizon',
  defaults: { description: null },
});

export const policies = simpleKind({
  type: 'policies',
  path: '/policies/',
  letter: 'Y',
  label: 'policy',
  idParam: 'policy_id',
  name: 'Policy',
  plural: 'Policies',
  defaults: { description: null },
  finish: (doc) => ({
    ...doc,
    config: {
      minimum_funding_amount: '0',
      cash_buffer: 0,
      rebalancing_threshold: 0.05,
      fractional_shares: false,
      transaction_cost_bps: 0,
      asset_class_bands: {},
      ...(doc.config as Doc),
    },
  }),
  check: (doc) => {
    const config = doc.config as Doc;
    const weights = Object.values((config.model_portfolio ?? {}) as Doc) as number[];
    const total = weights.reduce((a, w) => a + Math.round(w * 1e9), 0) / 1e9;
    if (total > 1) throw new InvalidField(['body', 'config', 'model_portfolio'], `weights add up to ${total}; they may add up to 1 at most (the rest is cash)`);
    for (const [assetClass, band] of Object.entries((config.asset_class_bands ?? {}) as Record<string, number[]>)) {
      if (band[0]! > band[1]!) throw new InvalidField(['body', 'config', 'asset_class_bands', assetClass], 'has its lower bound above its upper bound');
    }
  },
  effects: policyEffects,
});

export const riskProfiles = simpleKind({
  type: 'risk-profiles',
  path: '/risk-profiles/',
  letter: 'K',
  label: 'risk profile',
  idParam: 'risk_profile_id',
  name: 'RiskProfile',
  defaults: { description: null, policy_id: null },
  references: [['policy_id', 'policies']],
});

export const instrumentGroups = simpleKind({
  type: 'instrument_groups',
  path: '/instrument_groups/',
  letter: 'J',
  label: 'instrument group',
  idParam: 'instrument_group_id',
  name: 'InstrumentGroup',
  defaults: { category: null, description: null, image_uri: null },
  whole: ['name', 'category', 'description'],
});

export const questionnaires = simpleKind({
  type: 'questionnaires',
  path: '/suitability-profiler/questionnaires/',
  letter: 'Q',
  label: 'questionnaire',
  idParam: 'questionnaire_id',
  name: 'Questionnaire',
  defaults: { description: null, validity_days: 365, cooldown_days: 30, max_attempts: 3, sections: [] },
  check: checkQuestionnaire,
});

export const suitabilityProfiles = simpleKind({
  type: 'suitability-profiles',
  path: '/suitability-profiler/profiles/',
  letter: 'N',
  label: 'suitability profile',
  idParam: 'profile_id',
  name: 'SuitabilityProfile',
  defaults: { portfolio_id: null, assessments: [] },
  writeOnce: ['user_id'],
  references: [
    ['user_id', 'users'],
    ['portfolio_id', 'portfolios'],
    ['questionnaire_id', 'questionnaires'],
  ],
  access: (doc) => ({ readable_by: [str(doc.user_id)!], modifiable_by: [str(doc.user_id)!] }),
  effects: suitabilityProfileEffects,
});

export const transactions = simpleKind({
  type: 'transactions',
  path: '/portfolios/{parent}/transactions/',
  letter: 'T',
  label: 'transaction',
  idParam: 'transaction_id',
  name: 'Transaction',
  parent: { type: 'portfolios', letter: 'P', label: 'portfolio', idParam: 'portfolio_id' },
  defaults: { unit_price: null, optimization_id: null },
  references: [['optimization_id', 'optimizations']],
  finish: (doc, ctx) => {
    const instrument = doc.instrument_id ?? (doc.type === 'CASH' ? `$${String(doc.currency)}` : undefined);
    if (instrument === undefined) throw new InvalidField(['body', 'instrument_id'], 'is required unless the type is CASH');
    return {
      ...doc,
      portfolio_id: ctx.parent!.id,
      instrument_id: instrument,
      quantity: decimalText(doc.quantity),
      unit_price: decimalText(doc.unit_price),
      datetime: doc.datetime ?? ctx.now,
    };
  },
  // FX transactions are the service's record of its conversions (docs/adr/0022-execution-and-withdrawals.md).
  clientWrites: { create: checkClientCreate, update: checkClientUpdate, delete: checkClientDelete },
  // Whoever may read or modify the portfolio may do so with its transactions.
  access: (_doc, _id, ctx) => ({ readable_by: ctx.parent!.readable_by, modifiable_by: ctx.parent!.modifiable_by }),
});

/** Every entity type served by the generic handlers. */
export const entityKinds: EntityKind[] = [
  users,
  portfolios,
  goals,
  horizons,
  policies,
  riskProfiles,
  instrumentGroups,
  questionnaires,
  suitabilityProfiles,
  transactions,
];
