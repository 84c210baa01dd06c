import assert from 'node:assert/strict';
import { loadContract } from '@platform/shared';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

/**
 * Every field of every entity type's PATCH × {machine client, owner, another customer}: allowed or
 * refused, and a refused write changes nothing. The table must name every field the contract lets
 * a PATCH send (checked below), so a new field cannot slip in unclassified.
 */

type Owner = 'allowed' | 'refused';
type Case = {
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

type Ids = {
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

type EntityType = {
  name: string;
  patchSchema: string;
  /** Creates a fresh entity as the machine client; answers its path. */
  create: (api: Api, ids: Ids, extra: Record<string, unknown>) => Promise<string>;
  cases: (ids: Ids) => Case[];
  /** The entity is the owner itself (a user): its own token acts as the owner. */
  selfOwned?: boolean;
};

const IBAN = 'DE89370400440532013000';

const entityTypes: EntityType[] = [
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

function questionnaire(id = 'loss') {
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

/** `{a: {b: v}}` for the path `a.b`. */
function patchOf(field: string, value: unknown): Record<string, unknown> {
  return field.split('.').reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

function at(doc: any, field: string): unknown {
  return field.split('.').reduce((v, k) => v?.[k], doc);
}

/** The entity as the machine client reads it, without what a read adds on its own. */
async function snapshot(api: Api, path: string): Promise<unknown> {
  const res = await api('GET', path);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Property paths a PATCH body may carry, as deep as the schema names its properties. */
function schemaFields(schema: any, prefix = ''): string[] {
  const props = schema?.properties ?? {};
  return Object.entries(props).flatMap(([key, sub]: [string, any]) =>
    sub.properties && !sub.additionalProperties ? schemaFields(sub, `${prefix}${key}.`) : [`${prefix}${key}`],
  );
}

describe("a customer's token changes only what is the customer's", function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let machine: Api;
  let asOwner: Api;
  let asOther: Api;
  let ids: Ids;

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    machine = await machineApi(platform, tenant);
    const id = async (path: string, body: unknown) => {
      const res = await machine('POST', path, body);
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    const owner = await id('/users/', build.user());
    const other = await id('/users/', build.user({ first_name: 'Eve' }));
    const policy = await id('/policies/', build.policy());
    const questionnaireId = await id('/suitability-profiler/questionnaires/', questionnaire());
    ids = {
      owner,
      other,
      policy,
      policy2: await id('/policies/', build.policy({ name: 'Bold' })),
      goal: await id('/goals/', { name: 'House' }),
      horizon: await id('/horizons/', { name: 'Long', years: 10 }),
      risk: await id('/risk-profiles/', { name: 'Moderate', score: 3, risk_level: 3 }),
      questionnaire: questionnaireId,
      questionnaire2: await id('/suitability-profiler/questionnaires/', questionnaire('other')),
      profile: await id('/suitability-profiler/profiles/', { user_id: owner, questionnaire_id: questionnaireId }),
      portfolio: await id('/portfolios/', build.roboPortfolio(owner, { policy_id: policy })),
    };
    asOwner = await userApi(platform, machine, owner);
    asOther = await userApi(platform, machine, other);
  });
  after(() => platform.stop());

  it('classifies every field a PATCH of the contract may send', async () => {
    const schemas = (await loadContract('management')).components!.schemas as Record<string, unknown>;
    for (const type of entityTypes) {
      const listed = type
        .cases(ids)
        .map((c) => c.field)
        .sort();
      assert.deepEqual(listed, schemaFields(schemas[type.patchSchema]).sort(), `${type.name}: every field of ${type.patchSchema}`);
    }
  });

  for (const type of entityTypes) {
    it(`${type.name}: every field × {machine client, owner, other customer}`, async () => {
      for (const c of type.cases(ids)) {
        const label = `${type.name} ${c.field}`;
        const path = await type.create(machine, ids, c.create ?? {});
        const before = await snapshot(machine, path);
        const body = patchOf(c.field, c.value);

        // Another customer: neither reads nor changes it.
        assertProblem(await asOther('PATCH', path, body), 403, 'forbidden');
        assert.deepEqual(await snapshot(machine, path), before, `${label}: unchanged after another customer's PATCH`);

        const owner = type.selfOwned ? await userApi(platform, machine, path.split('/').pop()!) : asOwner;
        const owned = await owner('PATCH', path, body);
        if (c.owner === 'allowed') {
          assert.equal(owned.status, 200, `${label}: the owner may change it: ${owned.text}`);
          assert.deepEqual(at(owned.body, c.field), c.value, `${label}: changed by the owner`);
        } else {
          assertProblem(owned, 403, 'forbidden');
          if (c.owner === 'refused')
            assert.deepEqual(
              owned.body.errors?.map((e: { loc: unknown }) => e.loc),
              [['body', ...c.field.split('.')]],
              `${label}: the field is named`,
            );
          assert.deepEqual(await snapshot(machine, path), before, `${label}: unchanged after the owner's refused PATCH`);
        }

        const fresh = await type.create(machine, ids, c.create ?? {});
        const byMachine = await machine('PATCH', fresh, body);
        assert.equal(byMachine.status, c.machine ?? 200, `${label}: the machine client: ${byMachine.text}`);
      }
    });
  }

  it("deletes are the machine client's: the owner's DELETE of its user, portfolio, transaction or profile is refused and changes nothing", async () => {
    for (const type of entityTypes) {
      const path = await type.create(machine, ids, {});
      const before = await snapshot(machine, path);
      const owner = type.selfOwned ? await userApi(platform, machine, path.split('/').pop()!) : asOwner;
      assertProblem(await owner('DELETE', path), 403, 'forbidden');
      assertProblem(await asOther('DELETE', path), 403, 'forbidden');
      assert.deepEqual(await snapshot(machine, path), before, `${type.name}: unchanged`);
      const deleted = await machine('DELETE', path);
      assert.equal(deleted.status, 200, `${type.name}: ${deleted.text}`);
      assert.equal(deleted.body.deleted, true);
    }
  });

  it('holdings replaced whole are refused even when the patch only drops a position', async () => {
    const path = await entityTypes[1]!.create(machine, ids, { portfolio: { $EUR: 100, IE00B4L5Y983: 2 } });
    const before = await snapshot(machine, path);
    const res = await asOwner('PATCH', path, { portfolio: { $EUR: 100 } });
    assertProblem(res, 403, 'forbidden');
    assert.deepEqual(
      res.body.errors.map((e: { loc: unknown }) => e.loc),
      [['body', 'portfolio']],
    );
    assert.deepEqual(await snapshot(machine, path), before);
  });

  it('names every refused field of a mixed patch, and applies none of it', async () => {
    const path = await entityTypes[1]!.create(machine, ids, {});
    const before = await snapshot(machine, path);
    const res = await asOwner('PATCH', path, {
      name: 'Mine',
      funded_since: '2026-01-01T00:00:00.000Z',
      config: { manager_settings: { tags: ['x'], active: false } },
    });
    assertProblem(res, 403, 'forbidden');
    assert.deepEqual(res.body.errors.map((e: { loc: string[] }) => e.loc.join('.')).sort(), ['body.config.manager_settings.active', 'body.funded_since']);
    assert.deepEqual(await snapshot(machine, path), before);
  });

  it("sending back unchanged values of fields that are not the customer's is no change, and allowed", async () => {
    const path = await entityTypes[1]!.create(machine, ids, {});
    const current = (await snapshot(machine, path)) as any;
    const res = await asOwner('PATCH', path, {
      name: 'Mine',
      portfolio: current.portfolio,
      funded_since: null,
      config: { manager_settings: { policy_id: current.config.manager_settings.policy_id } },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'Mine');
  });

  it("another customer's transaction list is refused as the portfolio is; the owner gets it", async () => {
    const booked = await machine('POST', `/portfolios/${ids.portfolio}/transactions/`, build.transaction());
    assert.equal(booked.status, 201, booked.text);
    assertProblem(await asOther('GET', `/portfolios/${ids.portfolio}`), 403, 'forbidden');
    assertProblem(await asOther('GET', `/portfolios/${ids.portfolio}/transactions/`), 403, 'forbidden');
    const own = await asOwner('GET', `/portfolios/${ids.portfolio}/transactions/`);
    assert.equal(own.status, 200, own.text);
    assert.ok(
      own.body.results.some((t: { id: string }) => t.id === booked.body.id),
      'the owner sees the booked transaction',
    );
    assert.equal(own.body.count, (await machine('GET', `/portfolios/${ids.portfolio}/transactions/`)).body.count);
  });

  it("a customer's GET /events/ is refused: the feed is the integration's", async () => {
    assertProblem(await asOwner('GET', '/events/'), 403, 'forbidden');
    assert.equal((await machine('GET', '/events/')).status, 200);
  });

  it('a customer creates nothing and reports no funding', async () => {
    const portfoliosBefore = (await machine('GET', '/portfolios/')).body.count;
    const transactionsBefore = (await machine('GET', `/portfolios/${ids.portfolio}/transactions/`)).body.count;
    assertProblem(await asOwner('POST', '/portfolios/', build.portfolio(ids.owner)), 403, 'forbidden');
    assertProblem(await asOwner('POST', `/portfolios/${ids.portfolio}/transactions/`, build.transaction()), 403, 'forbidden');
    assertProblem(
      await asOwner('POST', '/events/deposit/', { data: { amount: '1', currency: 'EUR', portfolio: ids.portfolio, external_id: 'x-1' } }),
      403,
      'forbidden',
    );
    assertProblem(
      await asOwner('POST', '/events/withdraw/', { data: { amount: '1', currency: 'EUR', portfolio: ids.portfolio, external_id: 'x-2' } }),
      403,
      'forbidden',
    );
    assert.equal((await machine('GET', '/portfolios/')).body.count, portfoliosBefore);
    assert.equal((await machine('GET', `/portfolios/${ids.portfolio}/transactions/`)).body.count, transactionsBefore);
  });
});
