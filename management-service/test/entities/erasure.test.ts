import assert from 'node:assert/strict';
import { newUlid } from '@platform/shared';
import { waitFor } from '@platform/dev-stack/ports';
import { build, machineApi, personalUser, userApi, type Api } from '@platform/test-support/fixtures';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

// POST /users/{user_id}/erasure/ (docs/adr/0059-personal-data-erasure.md): refused while a portfolio
// is open, changing nothing; otherwise every stored version of the user loses its personal data.

describe('erasing a user (docs/adr/0059-personal-data-erasure.md)', function () {
  this.timeout(120_000);
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

  const create = async (body: Record<string, unknown>, key?: string) => {
    const res = await api('POST', '/users/', body, key ? { 'idempotency-key': key } : {});
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  /** Everything an erasure writes: the user's versions, the ledger, the kept answers and the outbox. */
  const state = async (userId: string) => {
    const db = platform.database.db;
    return {
      versions: await db('entity_versions').select('version', 'doc', 'deleted').where({ tenant_id: tenantId, id: userId }).orderBy('version'),
      ledger: await db('user_erasures').select('user_id').where({ tenant_id: tenantId, user_id: userId }),
      keys: await db('idempotency_keys').select('path', 'key').where({ tenant_id: tenantId }).orderBy('key'),
      outbox: (await db('outbox').count({ n: '*' }).where({ tenant_id: tenantId }).first())!.n,
    };
  };

  it('refuses while an owned portfolio holds anything or has a transaction under way, naming it, and changes nothing', async () => {
    const { body } = personalUser('DE89370400440532013000');
    const userId = await create(body);
    const portfolio = (await api('POST', '/portfolios/', build.portfolio(userId))).body.id as string;
    assert.equal((await api('PATCH', `/portfolios/${portfolio}`, { portfolio: { $EUR: 100 } })).status, 200);
    const before = await state(userId);
    const held = await api('POST', `/users/${userId}/erasure/`);
    assertProblem(held, 409, 'state_conflict');
    assert.match(held.body.detail, new RegExp(`${portfolio} holds \\$EUR`));
    assert.deepEqual(await state(userId), before);

    assert.equal((await api('PATCH', `/portfolios/${portfolio}`, { portfolio: { $EUR: 0 } })).status, 200);
    const moving = await api('POST', `/portfolios/${portfolio}/transactions/`, build.transaction({ status: 'PENDING' }));
    assert.equal(moving.status, 201, moving.text);
    const pending = await api('POST', `/users/${userId}/erasure/`);
    assertProblem(pending, 409, 'state_conflict');
    assert.match(pending.body.detail, new RegExp(`${portfolio} has 1 transaction\\(s\\) under way`));

    assert.equal((await api('PATCH', `/portfolios/${portfolio}/transactions/${moving.body.id}`, { status: 'SETTLED' })).status, 200);
    assert.equal((await api('POST', `/users/${userId}/erasure/`)).status, 200, 'emptied and settled, the portfolio is closed');
  });

  it('redacts every version, drops the kept answer of its creation, ends its tokens, and keeps its financial records', async () => {
    const erased = personalUser('DE89370400440532013000');
    const other = personalUser('GB82WEST12345698765432');
    const userId = await create(erased.body, `create-${newUlid()}`);
    const otherId = await create(other.body, `create-${newUlid()}`);
    assert.equal((await api('PATCH', `/users/${userId}`, { first_name: `${erased.body.first_name}x`, language: 'de-DE' })).status, 200);
    const portfolio = (await api('POST', '/portfolios/', build.portfolio(userId))).body.id as string;
    const customer = await userApi(platform, api, userId);
    assert.equal((await customer('GET', `/users/${userId}`)).status, 200);
    const before = await state(userId);
    assert.equal(before.versions.length, 2);
    assert.equal(before.keys.length, 2);

    const res = await api('POST', `/users/${userId}/erasure/`);
    assert.equal(res.status, 200, res.text);
    for (const field of ['first_name', 'last_name', 'email', 'phone', 'counter_account', 'brokerage_user_id', 'idp_user_id']) {
      assert.equal(res.body[field], null, field);
    }
    assert.equal(res.body.deleted, true);
    assert.equal(res.body.external_id, erased.body.external_id, 'the client keeps its pseudonym of the user');
    assert.ok(Date.parse(res.body.erased_at) > 0);
    assert.equal(res.body.version, 3);

    const after = await state(userId);
    assert.equal(after.versions.length, 3);
    for (const version of after.versions) {
      const text = JSON.stringify(version.doc).toLowerCase();
      for (const needle of erased.needles) assert.ok(!text.includes(needle.toLowerCase()), `version ${version.version} still holds ${needle}`);
      assert.equal(version.doc.language, version.version === 1 ? null : 'de-DE', 'what is not personal stays as it was');
    }
    assert.deepEqual(after.ledger, [{ user_id: userId }]);
    const told = await platform.database.db('outbox').select('envelope').where({ tenant_id: tenantId, entity_id: userId });
    assert.deepEqual(
      told.map((row) => row.envelope.data),
      [{ id: userId, external_id: erased.body.external_id, erased_at: res.body.erased_at }],
      'users.erasure tells the Client Middleware, with ids only',
    );
    assert.equal(after.keys.length, 1, "the kept answer of the erased user's creation is gone, the other user's stays");
    // The erased user's token stops within the revocation check's period (docs/adr/0006-token-revocation.md).
    await waitFor("the erased user's token to stop", async () => assertProblem(await customer('GET', `/users/${userId}`), 401, 'unauthenticated'), 15_000);
    assert.equal((await api('GET', `/portfolios/${portfolio}`)).body.owned_by_user_id, userId, 'the portfolio stays, naming the user');
    assertProblem(await api('PATCH', `/users/${userId}`, { first_name: 'Back' }), 409, 'state_conflict');

    const otherVersions = await platform.database.db('entity_versions').select('doc').where({ tenant_id: tenantId, id: otherId });
    assert.equal(otherVersions[0].doc.email, other.body.email, 'another user is untouched');

    // Again: the same answer, nothing written.
    const again = await api('POST', `/users/${userId}/erasure/`);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, (await api('GET', `/users/${userId}`)).body);
    assert.deepEqual(await state(userId), after);
    // The address is free for a new customer.
    assert.equal((await api('POST', '/users/', build.user({ email: erased.body.email }))).status, 201);
  });

  it('is for machine clients only, and 404 for an unknown user', async () => {
    const { body } = personalUser('DE89370400440532013000');
    const userId = await create(body);
    const before = await state(userId);
    assertProblem(await (await userApi(platform, api, userId))('POST', `/users/${userId}/erasure/`), 403, 'forbidden');
    assertProblem(await api('POST', `/users/U${newUlid()}/erasure/`), 404, 'not_found');
    assert.deepEqual(await state(userId), before);
  });
});
