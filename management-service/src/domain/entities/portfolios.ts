import { InvalidField, WriteOnceField } from '../errors.ts';
import { jsonEqual, mergePatch, type Doc } from '../merge.ts';
import { deriveStatus } from '../portfolio-status.ts';
import { portfolioEffects } from './portfolio-effects.ts';
import { str, type EntityKind, type Reference, type WriteContext } from './kind.ts';

/** Settings that only a robo-advised portfolio may carry (the interface's applicability table). */
const ROBO_ONLY = [
  'policy_id',
  'goal_id',
  'horizon_id',
  'risk_profile_id',
  'proposed_risk_profile_id',
  'risk_profile_score',
  'suitability_profile_id',
  'divest_amount',
  'start_amount',
  'recurring_deposit_amount',
  'end_datetime',
  'optimization_cooldown_end',
];

const SETTING_REFERENCES: [string, string][] = [
  ['policy_id', 'policies'],
  ['goal_id', 'goals'],
  ['horizon_id', 'horizons'],
  ['risk_profile_id', 'risk-profiles'],
  ['proposed_risk_profile_id', 'risk-profiles'],
  ['suitability_profile_id', 'suitability-profiles'],
];

/** Value objects a PATCH replaces whole (docs/adr/0007-patch-semantics.md); manager_settings merges key by key. */
const WHOLE = new Set(['portfolio', 'brokerage_account']);

/**
 * A PATCH that puts an object under `config.manager` means the settings: say where they go
 * (docs/adr/0007-patch-semantics.md), before the contract's plain "must be one of" would.
 */
export function checkManagerShape(body: unknown): void {
  const manager = (body as { config?: { manager?: unknown } } | null)?.config?.manager;
  if (manager !== null && typeof manager === 'object') {
    throw new InvalidField(
      ['body', 'config', 'manager'],
      'is the write-once manager name; settings such as divest_amount or active go under config.manager_settings',
    );
  }
}

/** The interface's samples also use owned_by_portfolio_id and proposed_risk_id: store canonical names. */
function canonical(body: Doc): Doc {
  const { owned_by_portfolio_id, ...rest } = body;
  const out: Doc = owned_by_portfolio_id === undefined ? rest : { ...rest, owned_by_user_id: owned_by_portfolio_id };
  const config = out.config as Doc | undefined;
  const settings = config?.manager_settings as Doc | undefined;
  if (settings && Object.hasOwn(settings, 'proposed_risk_id')) {
    const { proposed_risk_id, ...others } = settings;
    out.config = { ...config, manager_settings: { ...others, proposed_risk_profile_id: proposed_risk_id! } };
  }
  return out;
}

function checkRules(doc: Doc): void {
  const config = doc.config as Doc;
  const settings = (config.manager_settings ?? {}) as Doc;
  if (config.manager === 'USER_MANAGED') {
    if (doc.money_type !== 'REAL_MONEY')
      throw new InvalidField(['body', 'money_type'], 'must be REAL_MONEY: the self-investor product (USER_MANAGED) supports real money only');
    for (const key of ROBO_ONLY) {
      if (settings[key] !== undefined && settings[key] !== null) {
        throw new InvalidField(['body', 'config', 'manager_settings', key], 'applies to robo-advised portfolios only, not to USER_MANAGED ones');
      }
    }
  }
}

function complete(doc: Doc, ctx: WriteContext): Doc {
  const config = doc.config as Doc;
  const account = doc.brokerage_account as Doc | null | undefined;
  const out: Doc = {
    external_id: null,
    brokerage_account: null,
    portfolio: {},
    snapshot_datetime: null,
    archived: false,
    funded_since: null,
    owned_by_user_ids: [],
    start_datetime: ctx.now,
    ...doc,
    config: { ...config, manager_settings: { active: true, tags: [], ...((config.manager_settings ?? {}) as Doc) } },
  };
  if (account) out.brokerage_account = { brokerage_portfolio_id: null, brokerage_user_id: null, bank_id: null, payment_reference: null, ...account };
  out.status = deriveStatus(out, ctx.tenant.broker_integration);
  return out;
}

/**
 * The answer's form of a stored portfolio: rows written before `tags` had a default lack it, and
 * the contract answers it always (an empty list when none).
 */
function read(doc: Doc): Doc {
  const config = doc.config as Doc | undefined;
  const settings = config?.manager_settings as Doc | undefined;
  if (!config || (settings && settings.tags !== undefined)) return doc;
  return { ...doc, config: { ...config, manager_settings: { ...settings, tags: [] } } };
}

export const portfolios: EntityKind = {
  type: 'portfolios',
  letter: 'P',
  label: 'portfolio',
  path: '/portfolios/',
  idParam: 'portfolio_id',
  operations: {
    create: 'createPortfolio',
    get: 'getPortfolio',
    update: 'updatePortfolio',
    delete: 'deletePortfolio',
    versions: 'listPortfolioVersions',
    list: 'listPortfolios',
  },
  schema: 'Portfolio',
  embeddable: ['owned_by_user_id', ...SETTING_REFERENCES.map(([key]) => `config.manager_settings.${key}`)],
  beforeValidation: { create: checkManagerShape, update: checkManagerShape },
  create: (body, ctx) => {
    const doc = canonical(body);
    checkRules(doc);
    return complete(doc, ctx);
  },
  update: (current, body, ctx) => {
    const patch = canonical(body);
    const config = (patch.config ?? {}) as Doc;
    const currentConfig = current.config as Doc;
    if (patch.money_type !== undefined && patch.money_type !== current.money_type) throw new WriteOnceField(['body', 'money_type']);
    if (config.manager !== undefined && config.manager !== currentConfig.manager) throw new WriteOnceField(['body', 'config', 'manager']);
    if (Object.hasOwn(patch, 'funded_since') && current.funded_since !== null && !jsonEqual(patch.funded_since, current.funded_since)) {
      throw new WriteOnceField(['body', 'funded_since']);
    }
    const { status: _derived, ...stored } = current;
    const next = mergePatch(stored, patch, WHOLE);
    if (next.funded_since === undefined) next.funded_since = null;
    checkRules(next);
    return complete(next, ctx);
  },
  read,
  references: (doc) => {
    const refs: Reference[] = [{ loc: ['body', 'owned_by_user_id'], id: str(doc.owned_by_user_id)!, type: 'users' }];
    const settings = ((doc.config as Doc).manager_settings ?? {}) as Doc;
    for (const [key, type] of SETTING_REFERENCES) {
      const id = str(settings[key]);
      if (id) refs.push({ loc: ['body', 'config', 'manager_settings', key], id, type });
    }
    return refs;
  },
  access: (doc) => {
    const owner = str(doc.owned_by_user_id)!;
    return { readable_by: [owner], modifiable_by: [owner] };
  },
  effects: portfolioEffects,
};
