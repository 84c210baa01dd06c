import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

// `npm run cli -- user erase <tenant> <user_id>`: the operator's erasure, the same as
// POST /users/{user_id}/erasure/ (docs/adr/0059-personal-data-erasure.md).
describe('user erase through the CLI', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let api: Api;
  let tenantId: string;

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    tenantId = tenant.tenantId;
    api = await machineApi(platform, tenant);
  });
  after(() => platform?.stop());

  const cli = (...args: string[]) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'cli/src/main.ts', 'user', 'erase', ...args], {
      env: { ...process.env, DATABASE_URL: platform.database.url },
    });

  it('refuses while a portfolio is open, naming it, then erases and prints what it did', async () => {
    const userId = (await api('POST', '/users/', build.user({ email: 'cli.erase@example.org' }))).body.id as string;
    const portfolio = (await api('POST', '/portfolios/', build.portfolio(userId))).body.id as string;
    assert.equal((await api('PATCH', `/portfolios/${portfolio}`, { portfolio: { $EUR: 5 } })).status, 200);
    await assert.rejects(cli(tenantId, userId), (error: Error & { code: number; stderr: string }) => {
      assert.equal(error.code, 1);
      assert.match(error.stderr, new RegExp(`${portfolio} holds \\$EUR`));
      assert.doesNotMatch(error.stderr, /at .+\.ts:\d+/, 'no stack trace');
      return true;
    });
    assert.equal((await api('GET', `/users/${userId}`)).body.email, 'cli.erase@example.org', 'nothing changed');

    assert.equal((await api('PATCH', `/portfolios/${portfolio}`, { portfolio: { $EUR: 0 } })).status, 200);
    const printed = JSON.parse((await cli(tenantId, userId)).stdout) as { erased: string; erased_at: string; version: number };
    assert.equal(printed.erased, userId);
    const user = (await api('GET', `/users/${userId}`)).body;
    assert.equal(user.email, null);
    assert.equal(user.erased_at, printed.erased_at);
    assert.equal(user.version, printed.version);
  });
});
