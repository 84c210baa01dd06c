import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

describe('versions', () => {
  let platform: TestPlatform;
  let api: Api;
  let owner: string;
  before(async () => {
    platform = await startTestPlatform();
    api = await machineApi(platform, await platform.tenant());
    owner = (await api('POST', '/users/', build.user())).body.id;
  });
  after(() => platform.stop());

  it('keeps every version: old ones readable with ?version=N, the history with RFC 6902 patches', async () => {
    const p = (await api('POST', '/portfolios/', build.portfolio(owner, { portfolio: { $EUR: 100 } }))).body;
    await api('PATCH', `/portfolios/${p.id}`, { name: 'Renamed', portfolio: { $EUR: 100, IE00B4L5Y983: 2 } });
    const userToken = await userApi(platform, api, owner);
    await userToken('PATCH', `/portfolios/${p.id}`, { config: { manager_settings: { tags: ['growth'] } } });
    await api('DELETE', `/portfolios/${p.id}`);

    const v1 = (await api('GET', `/portfolios/${p.id}?version=1`)).body;
    assert.deepEqual([v1.version, v1.name, v1.portfolio, v1.deleted], [1, 'Pension', { $EUR: 100 }, false]);
    assert.equal((await api('GET', `/portfolios/${p.id}?version=3`)).body.config.manager_settings.tags[0], 'growth');
    assertProblem(await api('GET', `/portfolios/${p.id}?version=9`), 404, 'not_found');
    assertProblem(await api('GET', `/portfolios/${p.id}?version=0`), 400, 'invalid_parameter');

    const history = (await api('GET', `/portfolios/${p.id}/versions/`)).body;
    assert.equal(history.count, 4);
    assert.equal(history.next, null);
    assert.deepEqual(
      history.results.map((v: { version: number }) => v.version),
      [1, 2, 3, 4],
    );
    assert.equal(history.results[0].patch[0].op, 'add');
    assert.equal(history.results[0].patch[0].value.name, 'Pension');
    const byPath = (ops: { path: string }[]) => [...ops].sort((a, b) => a.path.localeCompare(b.path));
    assert.deepEqual(byPath(history.results[1].patch), [
      { op: 'replace', path: '/name', value: 'Renamed' },
      { op: 'add', path: '/portfolio/IE00B4L5Y983', value: 2 },
    ]);
    assert.deepEqual(history.results[2].patch, [{ op: 'add', path: '/config/manager_settings/tags/0', value: 'growth' }], 'tags were [] before');
    assert.deepEqual(history.results[3].patch, [{ op: 'replace', path: '/deleted', value: true }]);
    assert.deepEqual(
      history.results.map((v: { version_authored_by_user_id: string | null }) => v.version_authored_by_user_id),
      [null, null, owner, null],
    );

    const page = (await api('GET', `/portfolios/${p.id}/versions/?limit=2&offset=1`)).body;
    assert.deepEqual(
      page.results.map((v: { version: number }) => v.version),
      [2, 3],
    );
    assert.equal(page.next, `/portfolios/${p.id}/versions/?limit=2&offset=3`);
    assert.deepEqual(page.results[0].patch, history.results[1].patch, 'a page starting mid-history still diffs against the version before');
  });

  it('records no new version for a PATCH that changes nothing', async () => {
    const u = (await api('POST', '/users/', build.user())).body;
    assert.equal((await api('PATCH', `/users/${u.id}`, { first_name: 'Ada' })).body.version, 1);
  });

  it('applies If-Match: the current version passes, another is a 412 that changes nothing', async () => {
    const u = (await api('POST', '/users/', build.user())).body;
    assert.equal((await api('PATCH', `/users/${u.id}`, { first_name: 'B' }, { 'if-match': '1' })).body.version, 2);
    const stale = await api('PATCH', `/users/${u.id}`, { first_name: 'C' }, { 'if-match': '1' });
    assertProblem(stale, 412, 'version_mismatch');
    assert.equal((await api('GET', `/users/${u.id}`)).body.first_name, 'B');
    assertProblem(await api('DELETE', `/users/${u.id}`, undefined, { 'if-match': '"7"' }), 412, 'version_mismatch');
    assert.equal((await api('DELETE', `/users/${u.id}`, undefined, { 'if-match': '"2"' })).body.deleted, true);
    assertProblem(await api('PATCH', `/users/${u.id}`, { first_name: 'D' }, { 'if-match': 'latest' }), 422, 'validation_failed');
  });

  it('serialises 100 parallel PATCHes of one portfolio into versions 1..101, none lost', async () => {
    const p = (await api('POST', '/portfolios/', build.portfolio(owner))).body;
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => api('PATCH', `/portfolios/${p.id}`, { name: `name ${i}` })));
    assert.deepEqual(
      results.map((r) => r.status),
      Array(100).fill(200),
    );
    assert.deepEqual(
      results.map((r) => r.body.version).sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i + 2),
    );
    const versions = await platform.database.db('entity_versions').where({ id: p.id }).orderBy('version').select('version', 'doc');
    assert.deepEqual(
      versions.map((v) => v.version),
      Array.from({ length: 101 }, (_, i) => i + 1),
    );
    const names = new Set(versions.slice(1).map((v) => v.doc.name));
    assert.equal(names.size, 100, 'every PATCH is one version');
    const current = (await api('GET', `/portfolios/${p.id}`)).body;
    assert.equal(current.version, 101);
    assert.equal(current.name, versions[100].doc.name);
  });
});
