import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

describe('goals, horizons, policies, risk profiles, instrument groups, transactions, suitability profiles', () => {
  let platform: TestPlatform;
  let api: Api;
  let owner: string;
  let portfolio: string;
  before(async () => {
    platform = await startTestPlatform();
    api = await machineApi(platform, await platform.tenant());
    owner = (await api('POST', '/users/', build.user())).body.id;
    portfolio = (await api('POST', '/portfolios/', build.portfolio(owner))).body.id;
  });
  after(() => platform.stop());

  const kinds: [string, string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>][] = [
    [
      '/goals/',
      'L',
      { name: 'Retirement', target_amount: '250000.00' },
      { name: 'Retirement', target_amount: '-5' },
      { description: null, target_datetime: null },
    ],
    ['/horizons/', 'H', { name: 'Ten years', years: 10 }, { name: 'Forever', years: 0 }, { description: null }],
    [
      '/risk-profiles/',
      'K',
      { name: 'Balanced', score: 50, risk_level: 4 },
      { name: 'Wild', score: 50, risk_level: 8 },
      { description: null, policy_id: null },
    ],
    [
      '/instrument_groups/',
      'J',
      { name: { 'en-GB': 'Clean energy' }, instrument_ids: ['IE00B4L5Y983'] },
      { name: { 'en-GB': 'x' }, instrument_ids: ['NOT-AN-ISIN'] },
      { category: null, image_uri: null },
    ],
    ['/policies/', 'Y', build.policy(), build.policy({ config: { model_portfolio: { IE00B4L5Y983: 0.7, IE00B3F81409: 0.4 } } }), { description: null }],
  ];
  for (const [path, letter, good, bad, defaults] of kinds) {
    it(`${path}: created with id letter ${letter} and defaults, refused when invalid, changed, versioned, deleted`, async () => {
      const created = await api('POST', path, good);
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.id[0], letter);
      for (const [key, value] of Object.entries(defaults)) assert.deepEqual(created.body[key], value, key);
      assertProblem(await api('POST', path, bad), 422, 'validation_failed');
      const item = `${path}${created.body.id}`;
      const renamed = await api('PATCH', item, { external_id: `ext-${letter}` });
      assert.equal(renamed.body.version, 2);
      assert.equal((await api('GET', item)).body.external_id, `ext-${letter}`);
      assert.equal((await api('DELETE', item)).body.deleted, true);
      assertProblem(await api('GET', `${path}${created.body.id.replace(/^./, 'Z')}`), 404, 'not_found');
    });
  }

  it('fills the policy configuration with its defaults and merges a PATCH of it (null removes a band)', async () => {
    const policy = (await api('POST', '/policies/', build.policy())).body;
    assert.deepEqual(policy.config, {
      minimum_funding_amount: '0',
      cash_buffer: 0,
      rebalancing_threshold: 0.05,
      fractional_shares: false,
      transaction_cost_bps: 0,
      asset_class_bands: { EQUITY: [0.5, 0.7] },
      model_portfolio: { IE00B4L5Y983: 0.6, IE00B3F81409: 0.35 },
    });
    const next = await api('PATCH', `/policies/${policy.id}`, { config: { cash_buffer: 0.02, asset_class_bands: { EQUITY: null, FIXED_INCOME: [0.2, 0.4] } } });
    assert.equal(next.body.config.cash_buffer, 0.02);
    assert.deepEqual(next.body.config.asset_class_bands, { FIXED_INCOME: [0.2, 0.4] });
    assertProblem(await api('PATCH', `/policies/${policy.id}`, { config: { asset_class_bands: { EQUITY: [0.8, 0.2] } } }), 422, 'validation_failed');
  });

  it('answers a policy stored without a description with description null', async () => {
    const policy = (await api('POST', '/policies/', build.policy())).body.id;
    await platform.database
      .db('entities')
      .where({ id: policy })
      .update({ doc: platform.database.db.raw("doc - 'description'") });
    assert.equal((await platform.database.db('entities').where({ id: policy }).first()).doc.description, undefined);
    const read = (await api('GET', `/policies/${policy}`)).body;
    assert.equal(read.description, null);
  });

  it('checks that a risk profile names an existing policy', async () => {
    const policy = (await api('POST', '/policies/', build.policy())).body.id;
    assert.equal((await api('POST', '/risk-profiles/', { name: 'B', score: 1, risk_level: 2, policy_id: policy })).status, 201);
    const res = await api('POST', '/risk-profiles/', { name: 'B', score: 1, risk_level: 2, policy_id: 'Y01M80KHFCGRHVVWPCXR0XBGW3X' });
    assertProblem(res, 422, 'validation_failed');
    assert.deepEqual(res.body.errors[0].loc, ['body', 'policy_id']);
    assert.equal(res.body.errors[0].msg, 'names no policy of this tenant');
  });

  describe('transactions', () => {
    it('are created under their portfolio with exact decimal text and the cash key by default', async () => {
      const res = await api('POST', `/portfolios/${portfolio}/transactions/`, build.transaction({ quantity: 0.1, unit_price: '1.000001' }));
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers.get('location'), `/portfolios/${portfolio}/transactions/${res.body.id}`);
      assert.equal(res.body.id[0], 'T');
      assert.deepEqual(
        { portfolio_id: res.body.portfolio_id, quantity: res.body.quantity, unit_price: res.body.unit_price, instrument_id: res.body.instrument_id },
        { portfolio_id: portfolio, quantity: '0.1', unit_price: '1.000001', instrument_id: '$EUR' },
      );
      assert.deepEqual(res.body.readable_by, [owner], 'readable by whoever reads the portfolio');
      const changed = await api('PATCH', `/portfolios/${portfolio}/transactions/${res.body.id}`, { status: 'CANCELLED', quantity: -50 });
      assert.deepEqual([changed.body.status, changed.body.quantity], ['CANCELLED', '-50']);
    });

    it('never change the holdings of the portfolio', async () => {
      const before = (await api('GET', `/portfolios/${portfolio}`)).body;
      await api('POST', `/portfolios/${portfolio}/transactions/`, build.transaction({ quantity: '1000' }));
      const after = (await api('GET', `/portfolios/${portfolio}`)).body;
      assert.deepEqual([after.portfolio, after.version], [before.portfolio, before.version]);
    });

    it('need an instrument unless they are cash, and a portfolio that exists', async () => {
      const res = await api('POST', `/portfolios/${portfolio}/transactions/`, build.transaction({ type: 'ORDER' }));
      assertProblem(res, 422, 'validation_failed');
      assert.deepEqual(res.body.errors[0].loc, ['body', 'instrument_id']);
      assertProblem(await api('POST', '/portfolios/P01M80KHFCGRHVVWPCXR0XBGW3X/transactions/', build.transaction()), 404, 'not_found');
    });

    it('are found only under their own portfolio', async () => {
      const t = (await api('POST', `/portfolios/${portfolio}/transactions/`, build.transaction())).body.id;
      const other = (await api('POST', '/portfolios/', build.portfolio(owner))).body.id;
      assertProblem(await api('GET', `/portfolios/${other}/transactions/${t}`), 404, 'not_found');
      assert.equal((await api('GET', `/portfolios/${portfolio}/transactions/${t}`)).status, 200);
    });
  });

  it('links a suitability profile to an existing user, questionnaire and portfolio', async () => {
    const questionnaire = await api('POST', '/suitability-profiler/questionnaires/', {
      name: 'MiFID',
      questions: [{ id: 'q1', text: { 'en-GB': 'Experience?' }, type: 'SINGLE_CHOICE', options: [{ value: 'none', label: { 'en-GB': 'None' }, score: 0 }] }],
    });
    assert.equal(questionnaire.status, 201, questionnaire.text);
    assert.deepEqual([questionnaire.body.validity_days, questionnaire.body.cooldown_days, questionnaire.body.max_attempts], [365, 30, 3]);
    const profile = await api('POST', '/suitability-profiler/profiles/', { user_id: owner, questionnaire_id: questionnaire.body.id, portfolio_id: portfolio });
    assert.equal(profile.status, 201, profile.text);
    assert.equal(profile.body.id[0], 'N');
    assert.deepEqual(profile.body.assessments, []);
    assert.equal((await api('GET', `/suitability-profiler/profiles/${profile.body.id}/`)).body.user_id, owner);
    // user_id is write-once: its own value is accepted, another user is a 409 that changes nothing.
    const item = `/suitability-profiler/profiles/${profile.body.id}/`;
    assert.equal((await api('PATCH', item, { user_id: owner })).status, 200);
    const someoneElse = (await api('POST', '/users/', build.user())).body.id;
    const moved = await api('PATCH', item, { user_id: someoneElse });
    assertProblem(moved, 409, 'write_once_field');
    assert.deepEqual(moved.body.errors[0].loc, ['body', 'user_id']);
    const after = (await api('GET', item)).body;
    assert.deepEqual([after.user_id, after.readable_by], [owner, [owner]]);
    const bad = await api('POST', '/suitability-profiler/profiles/', { user_id: owner, questionnaire_id: 'Q01M80KHFCGRHVVWPCXR0XBGW3X' });
    assertProblem(bad, 422, 'validation_failed');
    assert.deepEqual(bad.body.errors[0].loc, ['body', 'questionnaire_id']);
    assert.equal(bad.body.errors[0].msg, 'names no questionnaire of this tenant');
    const noRisk = await api('POST', '/portfolios/', build.roboPortfolio(owner, { risk_profile_id: 'K01M80KHFCGRHVVWPCXR0XBGW3X' }));
    assert.equal(noRisk.body.errors[0].msg, 'names no risk profile of this tenant');
  });
});
