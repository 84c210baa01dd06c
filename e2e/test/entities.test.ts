import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform } from '../../scripts/test-support/platform.ts';
import { managementClient } from '../src/clients.ts';

describe('client middleware journey: user, portfolio, versions (generated client)', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  before(async () => {
    platform = await startTestPlatform();
  });
  after(() => platform.stop());

  it('logs in, onboards a customer with a portfolio, updates it, reads its history and acts as the customer', async () => {
    const tenant = await platform.tenant();
    const login = await managementClient(platform.managementUrl).POST('/auth/login/', { body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret } });
    const client = managementClient(platform.managementUrl, login.data!.access_token);

    const user = await client.POST('/users/', { body: { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', feature_flags: ['SELF_INVESTOR'] } });
    assert.equal(user.response.status, 201);
    const userId = user.data!.id;

    const portfolio = await client.POST('/portfolios/', {
      body: { name: 'Self invested', owned_by_user_id: userId, base_currency: 'USD', money_type: 'REAL_MONEY', config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} } },
    });
    assert.equal(portfolio.response.status, 201);
    const portfolioId = portfolio.data!.id;
    assert.equal(portfolio.data!.status, 'ACTIVE');

    const patched = await client.PATCH('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: portfolioId } }, body: { portfolio: { $USD: 1500, US0378331005: 4 } } });
    assert.deepEqual(patched.data!.portfolio, { $USD: 1500, US0378331005: 4 });

    const history = await client.GET('/portfolios/{portfolio_id}/versions/', { params: { path: { portfolio_id: portfolioId } } });
    assert.deepEqual(history.data!.results.map((v) => v.version), [1, 2]);

    const token = await client.POST('/auth/user-token/', { body: { user_id: userId } });
    const asCustomer = managementClient(platform.managementUrl, token.data!.access_token);
    const own = await asCustomer.GET('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: portfolioId } } });
    assert.equal(own.data!.version, 2);
    const notMine = await asCustomer.GET('/users/{user_id}', { params: { path: { user_id: (await client.POST('/users/', { body: {} })).data!.id } } });
    assert.equal(notMine.response.status, 403);
  });
});
