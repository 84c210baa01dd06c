import assert from 'node:assert/strict';
import fc from 'fast-check';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { PROTOTYPE_NAMES, prototypeSnapshot } from '@platform/test-support/prototype-names';

const q = encodeURIComponent;
type Token = 'machine' | 'customer';
type Place = 'compare' | 'in' | 'range' | 'orderby' | 'select' | 'nested';

/** A query naming `name` at one place, and the position of the path that holds it. */
function queryNaming(name: string, place: Place, lead: boolean, nestUnder: string): { text: string; position: number } {
  const before = lead ? "id neq 'x' and " : '';
  const path = place === 'nested' ? `${nestUnder}.${name}` : name;
  switch (place) {
    case 'compare':
    case 'nested':
      return { text: `${before}${path} eq 'x'`, position: before.length };
    case 'in':
      return { text: `${before}${path} in ['a', 'b']`, position: before.length };
    case 'range':
      return { text: `${before}${path} in [1 to 2]`, position: before.length };
    case 'orderby': {
      const head = `${lead ? "id neq 'x' " : ''}orderby id desc, `;
      return { text: `${head}${path} asc`, position: head.length };
    }
    case 'select': {
      const head = `${lead ? "id neq 'x' " : ''}select id, `;
      return { text: `${head}${path}`, position: head.length };
    }
  }
}

/**
 * Field names that every plain object answers for (`constructor`, `__proto__`, `toString`…) in
 * collection queries and `embed`, and as keys of request bodies: a 4xx problem at the name, never
 * a 500, and nothing changes (docs/adr/0019-no-5xx-input.md).
 */
describe('management interface: names of Object.prototype are unknown names', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let apis: Record<Token, Api>;
  let owner: string;
  let portfolio: string;
  let policy: string;
  const prototype = prototypeSnapshot();
  /** Each collection, and a path under which any further name is not a field. */
  let collections: { path: string; nestUnder: string }[];
  const baseline = new Map<string, string>();
  const page = async (token: Token, path: string) => {
    const res = await apis[token]('GET', path);
    assert.equal(res.status, 200, res.text);
    return JSON.stringify({ count: res.body.count, results: res.body.results });
  };

  before(async () => {
    // An end user's tokens are limited to 120 requests a minute by default; these runs send more.
    platform = await startTestPlatform({ RATE_LIMIT_USER: '0' });
    const tenant = await platform.tenant();
    const machine = await machineApi(platform, tenant);
    owner = (await machine('POST', '/users/', build.user())).body.id;
    policy = (await machine('POST', '/policies/', build.policy())).body.id;
    portfolio = (await machine('POST', '/portfolios/', build.roboPortfolio(owner, { policy_id: policy }))).body.id;
    assert.equal((await machine('POST', '/goals/', { name: 'House' })).status, 201);
    assert.equal((await machine('POST', `/portfolios/${portfolio}/transactions/`, build.transaction())).status, 201);
    apis = { machine, customer: await userApi(platform, machine, owner) };
    collections = [
      { path: '/users/', nestUnder: 'first_name' },
      { path: '/portfolios/', nestUnder: 'config.manager_settings' },
      { path: '/policies/', nestUnder: 'config.asset_class_bands' },
      { path: '/goals/', nestUnder: 'id' },
      { path: `/portfolios/${portfolio}/transactions/`, nestUnder: 'quantity' },
      { path: `/portfolios/${portfolio}/optimizations/`, nestUnder: 'version' },
    ];
    for (const token of ['machine', 'customer'] as const) {
      for (const { path } of collections) baseline.set(`${token} ${path}`, await page(token, path));
    }
  });
  after(() => platform?.stop());

  /** The answers read as before, and Object.prototype is as it was in the process that served them. */
  async function unchanged(token: Token, path: string) {
    assert.equal(await page(token, path), baseline.get(`${token} ${path}`));
    assert.deepEqual(prototypeSnapshot(), prototype);
  }

  it('in a filter, orderby or select of any collection: 400 invalid_query at the position of the path naming it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PROTOTYPE_NAMES),
        fc.nat({ max: 5 }),
        fc.constantFrom<Place>('compare', 'in', 'range', 'orderby', 'select', 'nested'),
        fc.boolean(),
        fc.constantFrom<Token>('machine', 'customer'),
        async (name, c, place, lead, token) => {
          const { path, nestUnder } = collections[c]!;
          const { text, position } = queryNaming(name, place, lead, nestUnder);
          const res = await apis[token]('GET', `${path}?query=${q(text)}`);
          assertProblem(res, 400, 'invalid_query');
          assert.equal(res.body.position, position, `${text}: ${res.body.detail}`);
          assert.deepEqual(res.body.errors[0].loc, ['query', 'query']);
          assert.ok(res.body.detail.includes(name), res.body.detail);
          assert.match(res.body.detail, /is not a field of this collection/);
          await unchanged(token, path);
        },
      ),
      { numRuns: 120 },
    );
  });

  it('every name, as a whole query and in orderby of /users/: the same 400, machine and customer', async () => {
    for (const name of PROTOTYPE_NAMES) {
      for (const token of ['machine', 'customer'] as const) {
        for (const text of [`${name} eq 'x'`, `orderby ${name}`]) {
          const res = await apis[token]('GET', `/users/?query=${q(text)}`);
          assertProblem(res, 400, 'invalid_query');
          assert.equal(res.body.position, text.indexOf(name), text);
        }
      }
    }
    await unchanged('machine', '/users/');
  });

  it('in embed: 400 invalid_parameter at query.embed naming it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROTOTYPE_NAMES), fc.nat({ max: 5 }), fc.constantFrom<Token>('machine', 'customer'), async (name, c, token) => {
        const { path } = collections[c]!;
        const res = await apis[token]('GET', `${path}?embed=${q(name)}`);
        assertProblem(res, 400, 'invalid_parameter');
        assert.deepEqual(res.body.errors[0].loc, ['query', 'embed']);
        assert.ok(res.body.detail.includes(name), res.body.detail);
        await unchanged(token, path);
      }),
      { numRuns: 40 },
    );
  });

  it('as a key of a create or a change, at the top or inside an object: 422 validation_failed at the key, nothing stored', async () => {
    const raw = (token: Token, method: string, path: string, json: string) =>
      call(platform.managementUrl + path, {
        method,
        rawBody: json,
        token: (apis[token] as Api & { token: string }).token,
        headers: { 'content-type': 'application/json' },
      });
    const versionOf = async (path: string) => (await apis.machine('GET', path)).body.version as number;
    const versions = {
      user: await versionOf(`/users/${owner}`),
      policy: await versionOf(`/policies/${policy}`),
      portfolio: await versionOf(`/portfolios/${portfolio}`),
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROTOTYPE_NAMES), fc.nat({ max: 4 }), fc.constantFrom<Token>('machine', 'customer'), async (name, form, token) => {
        const key = JSON.stringify(name);
        const [method, path, json, loc] = (
          [
            ['PATCH', `/users/${owner}`, `{"first_name": "Eve", ${key}: {"x": 1}}`, ['body', name]],
            ['POST', '/users/', `{"first_name": "Eve", "last_name": "L", ${key}: "x"}`, ['body', name]],
            ['PATCH', `/policies/${policy}`, `{"config": {"asset_class_bands": {${key}: [0, 1]}}}`, ['body', 'config', 'asset_class_bands', name]],
            ['PATCH', `/portfolios/${portfolio}`, `{"config": {"manager_settings": {${key}: 1}}}`, ['body', 'config', 'manager_settings', name]],
            ['PATCH', `/portfolios/${portfolio}`, `{"portfolio": {${key}: 1}}`, ['body', 'portfolio', name]],
          ] as const
        )[form]!;
        const res = await raw(token, method, path, json);
        assert.ok(res.status === 422 || (token === 'customer' && res.status === 403), `${method} ${path} ${json}: ${res.status} ${res.text}`);
        if (res.status === 422) {
          assertProblem(res, 422, 'validation_failed');
          assert.ok(
            res.body.errors.some((e: { loc: unknown[] }) => JSON.stringify(e.loc) === JSON.stringify(loc)),
            `${json}: ${JSON.stringify(res.body.errors)}`,
          );
        } else assertProblem(res, 403, 'forbidden');
        assert.equal(await versionOf(`/users/${owner}`), versions.user);
        assert.equal(await versionOf(`/policies/${policy}`), versions.policy);
        assert.equal(await versionOf(`/portfolios/${portfolio}`), versions.portfolio);
        assert.deepEqual(prototypeSnapshot(), prototype);
      }),
      { numRuns: 60 },
    );
    await unchanged('machine', '/users/');
  });

  it('as the name of a request header: answered as without it', async () => {
    for (const name of PROTOTYPE_NAMES) {
      for (const token of ['machine', 'customer'] as const) {
        const headers = { [name]: 'x' };
        const res = await apis[token]('GET', '/users/', undefined, headers);
        assert.equal(res.status, 200, `${name}: ${res.text}`);
        assert.equal(JSON.stringify({ count: res.body.count, results: res.body.results }), baseline.get(`${token} /users/`));
      }
      assertProblem(await apis.machine('POST', '/users/', { first_name: 1 }, { [name]: 'x', 'idempotency-key': `k-${name}` }), 422, 'validation_failed');
    }
    await unchanged('machine', '/users/');
  });
});
