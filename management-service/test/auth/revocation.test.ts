import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createAccessKey } from '../../src/admin/provisioning.ts';
import { revokeAccessKey } from '../../src/store/credentials.ts';
import { waitFor } from '@platform/dev-stack/ports';
import { build, machineApi, userApi, withToken } from '@platform/test-support/fixtures';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';

// The bound under test is the configured one; the margin covers a slow machine, nothing is timed.
const BOUND_MS = 1_000;
const DEADLINE_MS = BOUND_MS + 5_000;

describe('refresh-token chains and access-token revocation', () => {
  let platform: TestPlatform;
  const url = (path: string) => platform.managementUrl + path;
  const login = (t: TestTenant) => call(url('/auth/login/'), { body: { access_key_id: t.accessKeyId, secret_access_key: t.secret } });
  const refresh = (refresh_token: string) => call(url('/auth/refresh-token/'), { body: { refresh_token } });
  const refusedWithinBound = (what: string, request: () => ReturnType<typeof call>) =>
    waitFor(what, async () => assertProblem(await request(), 401, 'unauthenticated'), DEADLINE_MS);
  const tokensOfChain = async (familyId: string) => Number((await platform.database.db('refresh_tokens').where({ family_id: familyId }).count('* as n'))[0]!.n);
  const usersOf = async (tenantId: string) =>
    Number((await platform.database.db('entities').where({ tenant_id: tenantId, type: 'users' }).count('* as n'))[0]!.n);

  before(async () => {
    platform = await startTestPlatform({ TOKEN_REVOCATION_CHECK_MS: String(BOUND_MS) });
  });
  after(() => platform.stop());

  describe('refresh-token reuse', () => {
    it('revokes the whole chain: the reused token and the newest one are 401, the chain’s access token stops, a new login works', async () => {
      const tenant = await platform.tenant();
      const first = (await login(tenant)).body;
      const familyId = decodeJwt(first.access_token).sid as string;
      assert.equal(typeof familyId, 'string', 'a machine token names its refresh-token chain');
      const second = await refresh(first.refresh_token);
      assert.equal(second.status, 200, second.text);
      assert.equal(decodeJwt(second.body.access_token).sid, familyId, 'a rotated token stays in its chain');
      const third = await refresh(second.body.refresh_token);
      assert.equal(third.status, 200, third.text);
      const current = withToken(platform, third.body.access_token);
      assert.equal((await current('GET', '/users/')).status, 200);
      assert.equal(await tokensOfChain(familyId), 3);

      assertProblem(await refresh(second.body.refresh_token), 401, 'unauthenticated');
      assertProblem(await refresh(third.body.refresh_token), 401, 'unauthenticated');
      assertProblem(await refresh(first.refresh_token), 401, 'unauthenticated');
      assert.equal(await tokensOfChain(familyId), 3, 'a refused refresh issues nothing');
      const family = await platform.database.db('refresh_token_families').where({ id: familyId }).first();
      assert.equal(family.revoked_reason, 'refresh_token_reuse');
      await refusedWithinBound("the ended chain's access token", () => current('GET', '/users/'));

      const again = await login(tenant);
      assert.equal(again.status, 200, again.text);
      assert.notEqual(decodeJwt(again.body.access_token).sid, familyId);
      assert.equal((await withToken(platform, again.body.access_token)('GET', '/users/')).status, 200);
      const next = await refresh(again.body.refresh_token);
      assert.equal(next.status, 200, next.text);
    });

    it('lets at most one of many concurrent uses of one refresh token through and ends its chain', async () => {
      const tenant = await platform.tenant();
      const first = (await login(tenant)).body;
      const familyId = decodeJwt(first.access_token).sid as string;
      const results = await Promise.all(Array.from({ length: 6 }, () => refresh(first.refresh_token)));
      const winners = results.filter((r) => r.status === 200);
      assert.ok(winners.length <= 1, `${winners.length} concurrent refreshes succeeded`);
      for (const r of results.filter((x) => x.status !== 200)) assertProblem(r, 401, 'unauthenticated');
      assert.ok((await tokensOfChain(familyId)) <= 2, 'at most one successor was issued');
      for (const w of winners) assertProblem(await refresh(w.body.refresh_token), 401, 'unauthenticated');
      const family = await platform.database.db('refresh_token_families').where({ id: familyId }).first();
      assert.equal(family.revoked_reason, 'refresh_token_reuse');
    });

    it('leaves other chains of the same access key alone', async () => {
      const tenant = await platform.tenant();
      const mine = (await login(tenant)).body;
      const other = (await login(tenant)).body;
      assert.equal((await refresh(mine.refresh_token)).status, 200);
      assertProblem(await refresh(mine.refresh_token), 401, 'unauthenticated');
      const rotated = await refresh(other.refresh_token);
      assert.equal(rotated.status, 200, rotated.text);
    });
  });

  describe('revoking an access key', () => {
    it('refuses its refresh tokens at once, and its access tokens and the user tokens it obtained within the bound', async () => {
      const tenant = await platform.tenant();
      const spare = await createAccessKey(platform.database.db, tenant.tenantId);
      const spareApi = await machineApi(platform, { ...tenant, accessKeyId: spare.access_key_id, secret: spare.secret_access_key });
      const session = (await login(tenant)).body;
      const machine = withToken(platform, session.access_token);
      const user = await machine('POST', '/users/', build.user());
      assert.equal(user.status, 201, user.text);
      const asUser = await userApi(platform, machine, user.body.id);
      const spareUser = await userApi(platform, spareApi, user.body.id);
      // Both tokens have been accepted, so the revocation must get past what a replica caches.
      assert.equal((await machine('GET', '/users/')).status, 200);
      assert.equal((await asUser('GET', `/users/${user.body.id}`)).status, 200);

      assert.ok(await revokeAccessKey(platform.database.db, tenant.accessKeyId));
      assertProblem(await refresh(session.refresh_token), 401, 'unauthenticated');
      assertProblem(await login(tenant), 401, 'unauthenticated');
      await refusedWithinBound('the revoked key’s access token', () => machine('GET', '/users/'));
      await refusedWithinBound('a user token the revoked key obtained', () => asUser('GET', `/users/${user.body.id}`));

      const before = await usersOf(tenant.tenantId);
      assertProblem(await machine('POST', '/users/', build.user()), 401, 'unauthenticated');
      assertProblem(await machine('POST', '/auth/user-token/', { user_id: user.body.id }), 401, 'unauthenticated');
      assert.equal(await usersOf(tenant.tenantId), before, 'a refused request creates nothing');

      assert.equal((await spareApi('GET', '/users/')).status, 200, 'another key of the tenant still works');
      assert.equal((await spareUser('GET', `/users/${user.body.id}`)).status, 200, 'a user token obtained by another key still works');
      assert.equal(await revokeAccessKey(platform.database.db, tenant.accessKeyId), false, 'a second revocation changes nothing');
    });
  });

  describe('deleting a user', () => {
    it('stops its user tokens within the bound and refuses new ones', async () => {
      const tenant = await platform.tenant();
      const machine = await machineApi(platform, tenant);
      const gone = (await machine('POST', '/users/', build.user({ email: 'gone@example.com' }))).body;
      const stays = (await machine('POST', '/users/', build.user({ email: 'stays@example.com' }))).body;
      const asGone = await userApi(platform, machine, gone.id);
      const asStays = await userApi(platform, machine, stays.id);
      assert.equal((await asGone('GET', `/users/${gone.id}`)).status, 200);

      const deleted = await machine('DELETE', `/users/${gone.id}`);
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.deleted, true);
      assertProblem(await machine('POST', '/auth/user-token/', { user_id: gone.id }), 404, 'not_found');
      await refusedWithinBound("the deleted user's token", () => asGone('GET', `/users/${gone.id}`));

      assertProblem(await asGone('PATCH', `/users/${gone.id}`, { first_name: 'Eve' }), 401, 'unauthenticated');
      const after = (await machine('GET', `/users/${gone.id}`)).body;
      assert.equal(after.version, deleted.body.version, 'a refused request changes nothing');
      assert.equal(after.first_name, 'Ada');

      assert.equal((await asStays('GET', `/users/${stays.id}`)).status, 200, "another user's token still works");
      assert.equal((await machine('GET', '/users/')).status, 200, "the machine client's token still works");
    });
  });
});
