import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { machineClient, managementClient } from '../src/clients.ts';

describe('client middleware journey: user, portfolio, versions (the client package)', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  before(async () => {
    platform = await startTestPlatform();
  });
  after(() => platform.stop());

  it('logs in, onboards a customer with a portfolio, updates it, reads its history and acts as the customer', async () => {
    const tenant = await platform.tenant();
    const client = machineClient(platform.managementUrl, tenant);

    const user = await client.POST('/users/', {
      body: { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', feature_flags: ['SELF_INVESTOR'] },
    });
    assert.equal(user.response.status, 201);
    const userId = user.data!.id;

    const portfolio = await client.POST('/portfolios/', {
      body: {
        name: 'Self invested',
        owned_by_user_id: userId,
        base_currency: 'USD',
        money_type: 'REAL_MONEY',
        config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
      },
    });
    assert.equal(portfolio.response.status, 201);
    const portfolioId = portfolio.data!.id;
    assert.equal(portfolio.data!.status, 'ACTIVE');

    const patched = await client.PATCH('/portfolios/{portfolio_id}', {
      params: { path: { portfolio_id: portfolioId } },
      body: { portfolio: { $USD: 1500, US0378331005: 4 } },
    });
    assert.deepEqual(patched.data!.portfolio, { $USD: 1500, US0378331005: 4 });

    const history = await client.GET('/portfolios/{portfolio_id}/versions/', { params: { path: { portfolio_id: portfolioId } } });
    assert.deepEqual(
      history.data!.results.map((v) => v.version),
      [1, 2],
    );

    const token = await client.POST('/auth/user-token/', { body: { user_id: userId } });
    const asCustomer = managementClient(platform.managementUrl, token.data!.access_token);
    const own = await asCustomer.GET('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: portfolioId } } });
    assert.equal(own.data!.version, 2);
    const notMine = await asCustomer.GET('/users/{user_id}', { params: { path: { user_id: (await client.POST('/users/', { body: {} })).data!.id } } });
    assert.equal(notMine.response.status, 403);
  });

  // Every answer below is also checked against the contract by the client (src/response-shapes.ts).
  it('answers policies, selections, merge patches and refusals as the contract documents them', async () => {
    const tenant = await platform.tenant();
    const client = machineClient(platform.managementUrl, tenant);
    const userId = (await client.POST('/users/', { body: { first_name: 'Ada' } })).data!.id;

    const policy = await client.POST('/policies/', { body: { name: 'Balanced', config: { model_portfolio: { IE00B4L5Y983: 0.6 } } } });
    assert.equal(policy.data!.description, null);
    assert.equal((await client.GET('/policies/{policy_id}', { params: { path: { policy_id: policy.data!.id } } })).data!.description, null);

    const portfolio = await client.POST('/portfolios/', {
      body: {
        name: 'Robo',
        owned_by_user_id: userId,
        base_currency: 'EUR',
        money_type: 'REAL_MONEY',
        config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: { policy_id: policy.data!.id } },
      },
    });
    assert.deepEqual(portfolio.data!.config.manager_settings.tags, []);
    const whole = await client.GET('/portfolios/', { params: { query: { query: `owned_by_user_id eq '${userId}'` } } });
    assert.equal(whole.data!.count, 1);
    const selected = await client.GET('/portfolios/', {
      params: { query: { query: `owned_by_user_id eq '${userId}' select name, config.manager_settings.policy_id` } },
    });
    assert.deepEqual(selected.data!.results, [{ id: portfolio.data!.id, name: 'Robo', config: { manager_settings: { policy_id: policy.data!.id } } }]);

    const patched = await client.PATCH('/portfolios/{portfolio_id}', {
      params: { path: { portfolio_id: portfolio.data!.id } },
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { config: { manager_settings: { tags: ['pension'] } } },
    });
    assert.deepEqual(patched.data!.config.manager_settings.tags, ['pension']);

    const questionnaire = await client.POST('/suitability-profiler/questionnaires/', {
      body: {
        name: 'MiFID',
        questions: [
          {
            id: 'q1',
            text: { 'en-GB': 'Experience?' },
            type: 'SINGLE_CHOICE',
            required: true,
            options: [{ value: 'none', label: { 'en-GB': 'None' }, score: 0 }],
          },
        ],
      },
    });
    const profile = await client.POST('/suitability-profiler/profiles/', { body: { user_id: userId, questionnaire_id: questionnaire.data!.id } });
    const otherUser = (await client.POST('/users/', { body: {} })).data!.id;
    const moved = await client.PATCH('/suitability-profiler/profiles/{profile_id}/', {
      params: { path: { profile_id: profile.data!.id } },
      body: { user_id: otherUser },
    });
    assert.deepEqual([moved.response.status, moved.error?.code], [409, 'write_once_field']);

    const idp = await client.POST('/users/', { params: { query: { create_idp_user: true } }, body: { email: 'idp@example.com', phone: '+4915112345678' } });
    assert.deepEqual([idp.response.status, idp.error?.code], [422, 'validation_failed']);
  });
});
