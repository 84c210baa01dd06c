import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

const brokerage = { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000', payment_reference: 'REF-1' };

describe('portfolios', () => {
  let platform: TestPlatform;
  let api: Api;
  let owner: string;
  let policy: string;
  before(async () => {
    platform = await startTestPlatform();
    api = await machineApi(platform, await platform.tenant());
    owner = (await api('POST', '/users/', build.user())).body.id;
    policy = (await api('POST', '/policies/', build.policy())).body.id;
  });
  after(() => platform.stop());

  it('creates a portfolio with the documented defaults, readable and modifiable by its owner', async () => {
    const res = await api('POST', '/portfolios/', build.portfolio(owner));
    assert.equal(res.status, 201, res.text);
    const p = res.body;
    assert.match(p.id, /^P[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.deepEqual(
      {
        archived: p.archived,
        funded_since: p.funded_since,
        brokerage_account: p.brokerage_account,
        status: p.status,
        version: p.version,
        portfolio: p.portfolio,
      },
      { archived: false, funded_since: null, brokerage_account: null, status: 'ACTIVE', version: 1, portfolio: {} },
    );
    assert.equal(p.start_datetime, p.creation_datetime);
    assert.deepEqual([p.readable_by, p.modifiable_by], [[owner], [owner]]);
    assert.equal(p.config.manager_settings.active, true);
  });

  it('answers config.manager_settings.tags always: [] by default, kept by other changes, and for rows stored without it', async () => {
    const p = (await api('POST', '/portfolios/', build.portfolio(owner))).body;
    assert.deepEqual(p.config.manager_settings.tags, []);
    const tagged = await api('PATCH', `/portfolios/${p.id}`, { config: { manager_settings: { tags: ['green'] } } });
    assert.deepEqual(tagged.body.config.manager_settings.tags, ['green']);
    const other = await api('PATCH', `/portfolios/${p.id}`, { config: { manager_settings: { background_color: '#1A2B3C' } } });
    assert.deepEqual(other.body.config.manager_settings.tags, ['green']);

    // A portfolio written before tags had a default: its stored documents (current and version 1) lack them.
    const old = (await api('POST', '/portfolios/', build.roboPortfolio(owner, { policy_id: policy }))).body;
    const strip = "jsonb_set(doc, '{config,manager_settings}', (doc->'config'->'manager_settings') - 'tags')";
    await platform.database
      .db('entities')
      .where({ id: old.id })
      .update({ doc: platform.database.db.raw(strip) });
    await platform.database
      .db('entity_versions')
      .where({ id: old.id })
      .update({ doc: platform.database.db.raw(strip) });
    const stored = await platform.database.db('entities').where({ id: old.id }).first();
    assert.equal('tags' in stored.doc.config.manager_settings, false);
    assert.deepEqual((await api('GET', `/portfolios/${old.id}`)).body.config.manager_settings, { active: true, policy_id: policy, tags: [] });
    assert.deepEqual((await api('GET', `/portfolios/${old.id}?version=1`)).body.config.manager_settings.tags, []);
    const listed = await api('GET', `/portfolios/?query=${encodeURIComponent(`id eq '${old.id}'`)}`);
    assert.deepEqual(listed.body.results[0].config.manager_settings.tags, []);
  });

  describe('field rules: each accepted and refused', () => {
    const cases: [string, () => Record<string, unknown>, () => Record<string, unknown>, string][] = [
      ['name is required', () => build.portfolio(owner), () => ({ ...build.portfolio(owner), name: undefined }), 'body.name'],
      [
        'name up to 128 characters',
        () => build.portfolio(owner, { name: 'n'.repeat(128) }),
        () => build.portfolio(owner, { name: 'n'.repeat(129) }),
        'body.name',
      ],
      [
        'base_currency ISO 4217',
        () => build.portfolio(owner, { base_currency: 'USD' }),
        () => build.portfolio(owner, { base_currency: 'usd' }),
        'body.base_currency',
      ],
      [
        'money_type enum',
        () => build.roboPortfolio(owner, {}, { money_type: 'PAPER_MONEY' }),
        () => build.portfolio(owner, { money_type: 'MONOPOLY' }),
        'body.money_type',
      ],
      [
        'manager_version ≥ 1',
        () => build.portfolio(owner, { config: { manager: 'USER_MANAGED', manager_version: 2 } }),
        () => build.portfolio(owner, { config: { manager: 'USER_MANAGED', manager_version: 0 } }),
        'body.config.manager_version',
      ],
      [
        'manager enum',
        () => build.roboPortfolio(owner),
        () => build.portfolio(owner, { config: { manager: 'ROBOT', manager_version: 1 } }),
        'body.config.manager',
      ],
      [
        'holdings keys are ISINs or $CCY',
        () => build.portfolio(owner, { portfolio: { IE00B4L5Y983: 3.5, $EUR: 100.25 } }),
        () => build.portfolio(owner, { portfolio: { APPLE: 3 } }),
        'body.portfolio.APPLE',
      ],
      [
        'holdings quantities are numbers',
        () => build.portfolio(owner, { portfolio: { $USD: 0 } }),
        () => build.portfolio(owner, { portfolio: { $USD: '10' } }),
        'body.portfolio.$USD',
      ],
      [
        'brokerage account needs type and number',
        () => build.portfolio(owner, { brokerage_account: brokerage }),
        () => build.portfolio(owner, { brokerage_account: { bank_account_type: 'IBAN' } }),
        'body.brokerage_account.bank_account_number',
      ],
      [
        'brokerage bank_id pattern',
        () => build.portfolio(owner, { brokerage_account: { ...brokerage, bank_id: 'COBADEFFXXX' } }),
        () => build.portfolio(owner, { brokerage_account: { ...brokerage, bank_id: 'bank' } }),
        'body.brokerage_account.bank_id',
      ],
      ['owner is a user id', () => build.portfolio(owner), () => build.portfolio('P01M80KHFCGRHVVWPCXR0XBGW3X'), 'body.owned_by_user_id'],
      ['owner exists in the tenant', () => build.portfolio(owner), () => build.portfolio('U01M80KHFCGRHVVWPCXR0XBGW3X'), 'body.owned_by_user_id'],
      [
        'policy_id names a policy of the tenant',
        () => build.roboPortfolio(owner, { policy_id: policy }),
        () => build.roboPortfolio(owner, { policy_id: 'Y01M80KHFCGRHVVWPCXR0XBGW3X' }),
        'body.config.manager_settings.policy_id',
      ],
      ['USER_MANAGED needs REAL_MONEY', () => build.portfolio(owner), () => build.portfolio(owner, { money_type: 'PAPER_MONEY' }), 'body.money_type'],
      [
        'robo-only settings refused on USER_MANAGED',
        () => build.portfolio(owner, { config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: { tags: ['x'] } } }),
        () => build.portfolio(owner, { config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: { policy_id: policy } } }),
        'body.config.manager_settings.policy_id',
      ],
      [
        'unknown manager settings refused',
        () => build.roboPortfolio(owner, { divest_amount: 0 }),
        () => build.roboPortfolio(owner, { turbo: true }),
        'body.config.manager_settings.turbo',
      ],
    ];
    for (const [name, good, bad, loc] of cases) {
      it(name, async () => {
        const ok = await api('POST', '/portfolios/', good());
        assert.equal(ok.status, 201, ok.text);
        const refused = await api('POST', '/portfolios/', bad());
        assertProblem(refused, 422, 'validation_failed');
        assert.ok(
          refused.body.errors.some((e: { loc: unknown[] }) => e.loc.join('.') === loc),
          `${loc} in ${JSON.stringify(refused.body.errors)}`,
        );
      });
    }
  });

  it('accepts the aliases owned_by_portfolio_id and proposed_risk_id and answers with canonical names', async () => {
    const risk = (await api('POST', '/risk-profiles/', { name: 'Balanced', score: 50, risk_level: 4 })).body.id;
    const { owned_by_user_id: _owner, ...body } = build.roboPortfolio(owner, { proposed_risk_id: risk });
    const res = await api('POST', '/portfolios/', { ...body, owned_by_portfolio_id: owner });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.owned_by_user_id, owner);
    assert.equal(res.body.config.manager_settings.proposed_risk_profile_id, risk);
    assert.equal('owned_by_portfolio_id' in res.body, false);
  });

  it('keeps money_type, config.manager and funded_since write-once (409)', async () => {
    const p = (await api('POST', '/portfolios/', build.roboPortfolio(owner, { policy_id: policy }))).body;
    assert.equal(p.status, 'WAITING_FOR_FUNDS');
    assertProblem(await api('PATCH', `/portfolios/${p.id}/`, { money_type: 'PAPER_MONEY' }), 409, 'write_once_field');
    assertProblem(await api('PATCH', `/portfolios/${p.id}/`, { config: { manager: 'USER_MANAGED' } }), 409, 'write_once_field');
    const funded = await api('PATCH', `/portfolios/${p.id}/`, { funded_since: '2026-03-01T10:00:00.000Z' });
    assert.equal(funded.body.status, 'ACTIVE');
    assertProblem(await api('PATCH', `/portfolios/${p.id}/`, { funded_since: '2026-04-01T10:00:00.000Z' }), 409, 'write_once_field');
    assert.equal((await api('PATCH', `/portfolios/${p.id}/`, { funded_since: '2026-03-01T10:00:00.000Z', name: 'same funded_since' })).status, 200);
  });

  it('points an object under config.manager to config.manager_settings (422)', async () => {
    const p = (await api('POST', '/portfolios/', build.roboPortfolio(owner, { policy_id: policy }))).body;
    const res = await api('PATCH', `/portfolios/${p.id}/`, { config: { manager: { divest_amount: 100 } } });
    assertProblem(res, 422, 'validation_failed');
    assert.match(res.body.detail, /config\.manager_settings/);
  });

  it('merges manager settings, replaces holdings and brokerage account whole, and re-derives the status', async () => {
    const p = (
      await api(
        'POST',
        '/portfolios/',
        build.roboPortfolio(owner, { policy_id: policy, tags: ['a'] }, { portfolio: { $EUR: 10, IE00B4L5Y983: 1 }, brokerage_account: brokerage }),
      )
    ).body;
    const res = await api('PATCH', `/portfolios/${p.id}/`, {
      config: { manager_settings: { divest_amount: 250.5 } },
      portfolio: { $EUR: 12.5 },
      brokerage_account: { bank_account_type: 'ABA', bank_account_number: 'US12345678901234567' },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.config.manager_settings, { active: true, policy_id: policy, tags: ['a'], divest_amount: 250.5 });
    assert.deepEqual(res.body.portfolio, { $EUR: 12.5 });
    assert.deepEqual(res.body.brokerage_account, {
      bank_account_type: 'ABA',
      bank_account_number: 'US12345678901234567',
      brokerage_portfolio_id: null,
      brokerage_user_id: null,
      bank_id: null,
      payment_reference: null,
    });
    const inactive = await api('PATCH', `/portfolios/${p.id}/`, { config: { manager_settings: { active: false } } });
    assert.equal(inactive.body.status, 'INACTIVE');
    const archived = await api('PATCH', `/portfolios/${p.id}/`, { config: { manager_settings: { active: true } }, archived: true });
    assert.equal(archived.body.status, 'INACTIVE');
    assert.equal((await api('PATCH', `/portfolios/${p.id}/`, { archived: false })).body.status, 'WAITING_FOR_FUNDS');
  });

  it('asks for a brokerage account first when the tenant has the broker integrated by the service', async () => {
    const tenant = await platform.tenant();
    await platform.database.db('tenants').where({ id: tenant.tenantId }).update({ broker_integration: 'SERVICE' });
    const service = await machineApi(platform, tenant);
    const user = (await service('POST', '/users/', {})).body.id;
    const p = (await service('POST', '/portfolios/', build.portfolio(user))).body;
    assert.equal(p.status, 'WAITING_FOR_ACCOUNT');
    assert.equal((await service('PATCH', `/portfolios/${p.id}`, { brokerage_account: brokerage })).body.status, 'ACTIVE');
  });

  it('changes the owner only to an existing user, and the owner then reads it', async () => {
    const p = (await api('POST', '/portfolios/', build.portfolio(owner))).body;
    const next = (await api('POST', '/users/', {})).body.id;
    assertProblem(await api('PATCH', `/portfolios/${p.id}`, { owned_by_user_id: 'U01M80KHFCGRHVVWPCXR0XBGW3X' }), 422, 'validation_failed');
    const moved = await api('PATCH', `/portfolios/${p.id}`, { owned_by_user_id: next });
    assert.deepEqual(moved.body.readable_by, [next]);
  });
});
