import assert from 'node:assert/strict';
import { type InvalidField, WriteOnceField } from '../../src/domain/errors.ts';
import { checkManagerShape, portfolios } from '../../src/domain/entities/portfolios.ts';
import type { WriteContext } from '../../src/domain/entities/kind.ts';
import { deriveStatus } from '../../src/domain/portfolio-status.ts';

const owner = 'U01M80KHFCGRHVVWPCXR0XBGW3X';
const ctx = (over: Partial<WriteContext> = {}): WriteContext => ({
  principal: { tenantId: 't', kind: 'machine', subject: 'A1' },
  now: '2026-01-02T03:04:05.678Z',
  tenant: { broker_integration: 'CLIENT' },
  ...over,
});
const robo = (settings: Record<string, unknown> = {}, over: Record<string, unknown> = {}) => ({
  name: 'p',
  owned_by_user_id: owner,
  base_currency: 'EUR',
  money_type: 'REAL_MONEY',
  config: { manager: 'ROBO_ADVISOR_ADVISORY', manager_version: 1, manager_settings: settings },
  ...over,
});

describe('portfolio status (docs/adr/0008-portfolio-status.md)', () => {
  const status = (doc: Record<string, unknown>, integration: 'CLIENT' | 'SERVICE' = 'CLIENT') => deriveStatus(doc as never, integration);
  const cases: [string, Record<string, unknown>, 'CLIENT' | 'SERVICE', string][] = [
    ['archived', robo({ policy_id: 'Y' }, { archived: true, funded_since: 'x' }), 'CLIENT', 'INACTIVE'],
    ['deactivated', robo({ policy_id: 'Y', active: false }, { funded_since: 'x' }), 'CLIENT', 'INACTIVE'],
    ['robo without policy', robo({}), 'CLIENT', 'WAITING_FOR_POLICY'],
    ['service broker, no account', robo({ policy_id: 'Y' }), 'SERVICE', 'WAITING_FOR_ACCOUNT'],
    ['service broker, account, not funded', robo({ policy_id: 'Y' }, { brokerage_account: { bank_account_number: 'X' } }), 'SERVICE', 'WAITING_FOR_FUNDS'],
    ['client broker, not funded', robo({ policy_id: 'Y' }), 'CLIENT', 'WAITING_FOR_FUNDS'],
    ['funded robo', robo({ policy_id: 'Y' }, { funded_since: '2026-01-01T00:00:00.000Z' }), 'CLIENT', 'ACTIVE'],
    ['paper robo, not funded', robo({ policy_id: 'Y' }, { money_type: 'PAPER_MONEY' }), 'SERVICE', 'ACTIVE'],
    ['user managed', robo({}, { config: { manager: 'USER_MANAGED', manager_version: 1 } }), 'CLIENT', 'ACTIVE'],
    ['user managed, service broker, no account', robo({}, { config: { manager: 'USER_MANAGED', manager_version: 1 } }), 'SERVICE', 'WAITING_FOR_ACCOUNT'],
  ];
  for (const [name, doc, integration, expected] of cases) {
    it(`${name} → ${expected}`, () => assert.equal(status(doc, integration), expected));
  }
});

describe('portfolio rules', () => {
  it('stores canonical names for the interface aliases', () => {
    const { owned_by_user_id, ...rest } = robo({ proposed_risk_id: 'K01M80KHFCGRHVVWPCXR0XBGW3X' });
    const doc = portfolios.create({ ...rest, owned_by_portfolio_id: owned_by_user_id } as never, ctx());
    assert.equal(doc.owned_by_user_id, owner);
    assert.equal('owned_by_portfolio_id' in doc, false);
    const settings = (doc.config as { manager_settings: Record<string, unknown> }).manager_settings;
    assert.equal(settings.proposed_risk_profile_id, 'K01M80KHFCGRHVVWPCXR0XBGW3X');
    assert.equal('proposed_risk_id' in settings, false);
    assert.equal(settings.active, true, 'active defaults to true');
  });

  it('refuses PAPER_MONEY and robo-only settings on a USER_MANAGED portfolio', () => {
    const userManaged = (settings: Record<string, unknown>, money = 'REAL_MONEY') =>
      robo(settings, { money_type: money, config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: settings } });
    assert.throws(
      () => portfolios.create(userManaged({}, 'PAPER_MONEY') as never, ctx()),
      (e: InvalidField) => e.loc.join('.') === 'body.money_type',
    );
    assert.throws(
      () => portfolios.create(userManaged({ divest_amount: 10 }) as never, ctx()),
      (e: InvalidField) => e.loc.join('.') === 'body.config.manager_settings.divest_amount',
    );
    assert.doesNotThrow(() => portfolios.create(userManaged({ tags: ['a'], active: false }) as never, ctx()));
  });

  it('keeps money_type, config.manager and a set funded_since write-once; the same value passes', () => {
    const current = portfolios.create(robo({ policy_id: 'Y1' }, { funded_since: '2026-01-01T00:00:00.000Z' }) as never, ctx());
    assert.throws(() => portfolios.update(current, { money_type: 'PAPER_MONEY' }, ctx()), WriteOnceField);
    assert.throws(() => portfolios.update(current, { config: { manager: 'USER_MANAGED' } }, ctx()), WriteOnceField);
    assert.throws(() => portfolios.update(current, { funded_since: '2026-02-01T00:00:00.000Z' }, ctx()), WriteOnceField);
    assert.throws(() => portfolios.update(current, { funded_since: null }, ctx()), WriteOnceField);
    assert.doesNotThrow(() => portfolios.update(current, { money_type: 'REAL_MONEY', config: { manager: 'ROBO_ADVISOR_ADVISORY' } }, ctx()));
    const unfunded = portfolios.create(robo({ policy_id: 'Y1' }) as never, ctx());
    assert.equal(portfolios.update(unfunded, { funded_since: '2026-02-01T00:00:00.000Z' }, ctx()).status, 'ACTIVE');
  });

  it('merges manager settings key by key and replaces holdings whole, re-deriving the status', () => {
    const current = portfolios.create(robo({ policy_id: 'Y1', tags: ['a'] }, { portfolio: { $EUR: 5, IE00B4L5Y983: 2 } }) as never, ctx());
    const next = portfolios.update(current, { config: { manager_settings: { active: false } }, portfolio: { $EUR: 7 } }, ctx());
    assert.deepEqual((next.config as { manager_settings: unknown }).manager_settings, { active: false, policy_id: 'Y1', tags: ['a'] });
    assert.deepEqual(next.portfolio, { $EUR: 7 });
    assert.equal(next.status, 'INACTIVE');
  });

  it("derives INACTIVE from archived (who may archive is the customer-rights table's rule)", () => {
    const current = portfolios.create(robo({ policy_id: 'Y1' }) as never, ctx());
    assert.equal(portfolios.update(current, { archived: true }, ctx()).status, 'INACTIVE');
  });

  it('points an object under config.manager to config.manager_settings', () => {
    assert.throws(
      () => checkManagerShape({ config: { manager: { divest_amount: 5 } } }),
      (e: Error) => /config\.manager_settings/.test(e.message),
    );
    assert.doesNotThrow(() => checkManagerShape({ config: { manager: 'USER_MANAGED' } }));
    assert.doesNotThrow(() => checkManagerShape(undefined));
  });
});
