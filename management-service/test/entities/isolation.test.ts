import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { inTenant } from '../../src/store/tenant-scope.ts';

describe('tenant isolation and permissions', () => {
  let platform: TestPlatform;
  let a: TestTenant;
  let apiA: Api;
  let apiB: Api;
  /** Item path of one entity of every type, all of tenant A. */
  const items: Record<string, string> = {};

  before(async () => {
    platform = await startTestPlatform();
    a = await platform.tenant();
    apiA = await machineApi(platform, a);
    apiB = await machineApi(platform, await platform.tenant());
    const create = async (name: string, path: string, body: unknown) => {
      const res = await apiA('POST', path, body);
      assert.equal(res.status, 201, `${name}: ${res.text}`);
      items[name] = res.headers.get('location')!;
      return res.body.id as string;
    };
    const user = await create('user', '/users/', build.user());
    const policy = await create('policy', '/policies/', build.policy());
    const portfolio = await create('portfolio', '/portfolios/', build.roboPortfolio(user, { policy_id: policy }));
    await create('goal', '/goals/', { name: 'g' });
    await create('horizon', '/horizons/', { name: 'h', years: 5 });
    await create('risk profile', '/risk-profiles/', { name: 'r', score: 1, risk_level: 3 });
    await create('instrument group', '/instrument_groups/', { name: { en: 'i' }, instrument_ids: [] });
    await create('transaction', `/portfolios/${portfolio}/transactions/`, build.transaction());
    const questionnaire = await create('questionnaire', '/suitability-profiler/questionnaires/', {
      name: 'q',
      questions: [{ id: 'q1', text: { en: 'q' }, type: 'BOOLEAN' }],
    });
    await create('suitability profile', '/suitability-profiler/profiles/', { user_id: user, questionnaire_id: questionnaire });
  });
  after(() => platform.stop());

  it("answers another tenant's ids with 404 on every route and changes nothing", async () => {
    for (const [name, path] of Object.entries(items)) {
      for (const [method, suffix, body] of [
        ['GET', '', undefined],
        ['GET', '?version=1', undefined],
        ['GET', '/versions/', undefined],
        ['PATCH', '', { external_id: 'stolen' }],
        ['DELETE', '', undefined],
      ] as const) {
        const res = await apiB(method, path + suffix, body);
        assertProblem(res, 404, 'not_found');
        assert.ok(res.status === 404, `${method} ${name}${suffix}`);
      }
      const own = await apiA('GET', path);
      assert.deepEqual([own.body.version, own.body.deleted, own.body.external_id], [1, false, null], name);
    }
  });

  it("refuses references to another tenant's entities and nesting under its portfolio", async () => {
    const userOfA = items.user!.split('/')[2]!;
    const res = await apiB('POST', '/portfolios/', build.portfolio(userOfA));
    assertProblem(res, 422, 'validation_failed');
    assertProblem(await apiB('POST', `${items.portfolio}/transactions/`, build.transaction()), 404, 'not_found');
    assertProblem(await apiB('POST', '/auth/user-token/', { user_id: userOfA }), 404, 'not_found');
  });

  it('lets row-level security show a transaction only its tenant, even without a where clause', async () => {
    const db = platform.database.db;
    assert.equal((await apiB('POST', '/users/', {})).status, 201);
    const all = await db('entities').count<{ count: string }[]>('* as count');
    const seen = await inTenant(db, a.tenantId, (trx) => trx('entities').select('tenant_id'));
    assert.ok(seen.length > 0 && seen.every((r) => r.tenant_id === a.tenantId), 'only tenant A');
    assert.ok(Number(all[0]!.count) > seen.length, 'other tenants have rows too');
    const unset = await db.transaction(async (trx) => {
      await trx.raw('set local role platform_tenant');
      const rows: { id: string }[] = await trx('entities').select('id');
      return rows;
    });
    assert.equal(unset.length, 0, 'no tenant set: nothing visible');
    const foreign = await inTenant(db, a.tenantId, (trx) => trx('entities').whereNot({ tenant_id: a.tenantId }).update({ deleted: true }));
    assert.equal(foreign, 0, "an update cannot reach another tenant's rows");
    await assert.rejects(
      inTenant(db, a.tenantId, (trx) =>
        trx('entities').insert({ tenant_id: 'someone-else', id: 'U1', type: 'users', version: 1, doc: {}, created_at: new Date(), version_at: new Date() }),
      ),
      /row-level security/,
    );
  });

  describe('end users', () => {
    let owner: string;
    let portfolio: string;
    let other: string;
    let otherPortfolio: string;
    let asOwner: Api;

    before(async () => {
      owner = (await apiA('POST', '/users/', build.user())).body.id;
      portfolio = (await apiA('POST', '/portfolios/', build.portfolio(owner))).body.id;
      other = (await apiA('POST', '/users/', build.user())).body.id;
      otherPortfolio = (await apiA('POST', '/portfolios/', build.portfolio(other))).body.id;
      asOwner = await userApi(platform, apiA, owner);
    });

    it('read and change what readable_by / modifiable_by grant them', async () => {
      assert.equal((await asOwner('GET', `/users/${owner}`)).status, 200);
      assert.equal((await asOwner('GET', `/portfolios/${portfolio}`)).status, 200);
      const changed = await asOwner('PATCH', `/portfolios/${portfolio}`, { name: 'Mine' });
      assert.equal(changed.status, 200);
      assert.equal(changed.body.version_authored_by_user_id, owner);
      assert.equal((await asOwner('GET', `/portfolios/${portfolio}/versions/`)).status, 200);
    });

    it('get 403 for what they may not read or change, and nothing changes', async () => {
      assertProblem(await asOwner('GET', `/users/${other}`), 403, 'forbidden');
      assertProblem(await asOwner('GET', `/portfolios/${otherPortfolio}`), 403, 'forbidden');
      assertProblem(await asOwner('PATCH', `/portfolios/${otherPortfolio}`, { name: 'Stolen' }), 403, 'forbidden');
      assertProblem(await asOwner('DELETE', `/portfolios/${otherPortfolio}`), 403, 'forbidden');
      assertProblem(await asOwner('GET', items.goal!), 403, 'forbidden');
      assert.equal((await apiA('GET', `/portfolios/${otherPortfolio}`)).body.version, 1);
    });

    it('may not create entities, archive, or obtain tokens', async () => {
      assertProblem(await asOwner('POST', '/portfolios/', build.portfolio(owner)), 403, 'forbidden');
      assertProblem(await asOwner('PATCH', `/portfolios/${portfolio}`, { archived: true }), 403, 'forbidden');
      assertProblem(await asOwner('POST', '/auth/user-token/', { user_id: owner }), 403, 'forbidden');
    });

    it('no token for a deleted or unknown user', async () => {
      const gone = (await apiA('POST', '/users/', {})).body.id;
      await apiA('DELETE', `/users/${gone}`);
      assertProblem(await apiA('POST', '/auth/user-token/', { user_id: gone }), 404, 'not_found');
      assertProblem(await apiA('POST', '/auth/user-token/', { user_id: 'U01M80KHFCGRHVVWPCXR0XBGW3X' }), 404, 'not_found');
    });
  });
});
