import assert from 'node:assert/strict';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';

type Answer = Awaited<ReturnType<typeof call>>;
const locs = (res: Answer) => res.body.errors.map((e: { loc: (string | number)[] }) => e.loc);
const q = encodeURIComponent;

/**
 * Requests an attacker sent that answered 500: each is now a precise 4xx problem and changes
 * nothing.
 */
describe('management interface: hostile input is a 4xx problem and changes nothing', () => {
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: Api & { token: string };
  let user: { id: string; first_name: string; version: number };
  const url = (path: string) => platform.managementUrl + path;
  /** A JSON body sent as text, so that it can hold escapes (\u0000, \ud800) and numbers JSON.stringify cannot write. */
  const raw = (method: string, path: string, json: string, headers: Record<string, string> = {}) =>
    call(url(path), { method, rawBody: json, token: api.token, headers: { 'content-type': 'application/json', ...headers } });
  const userCount = async () => (await api('GET', '/users/?limit=1&query=deleted%20eq%20false%20or%20deleted%20eq%20true')).body.count as number;

  before(async () => {
    platform = await startTestPlatform();
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
    user = (await api('POST', '/users/', build.user())).body;
    assert.equal((await api('POST', '/portfolios/', build.portfolio(user.id))).status, 201);
  });
  after(() => platform?.stop());

  describe('numbers of collection queries that Postgres cannot hold', () => {
    for (const query of [
      'config.manager_settings.divest_amount gt 1e999999',
      'config.manager_settings.divest_amount lt -1e999999',
      'config.manager_settings.divest_amount in [0 to 1e999999]',
      "config.manager_settings.divest_amount in [1, '1e999999']",
      'config.manager_settings.divest_amount eq 1e-999999',
      'version eq 1e400',
    ]) {
      it(`${query}: 400 invalid_query naming the position of the term`, async () => {
        const res = await api('GET', `/portfolios/?query=${q(query)}`);
        assertProblem(res, 400, 'invalid_query');
        assert.equal(res.body.position, 0);
        assert.match(res.body.detail, /at position 0: .*(beyond the range of numbers|digits after the decimal point)/);
      });
    }

    it('a number Postgres can hold still compares: 1e100, 1e-400 and a 300-digit integer', async () => {
      for (const value of ['1e100', '1e-400', '9'.repeat(300)]) {
        const res = await api('GET', `/portfolios/?query=${q(`config.manager_version lt ${value}`)}`);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.count, value === '1e-400' ? 0 : 1);
      }
    });

    it('times outside the years 1 to 9999: 400 before the year 1, the day after 9999-12-31 compares as infinity', async () => {
      assertProblem(await api('GET', `/portfolios/?query=${q("funded_since lt '0000-01-01'")}`), 400, 'invalid_query');
      assertProblem(await api('GET', `/portfolios/?query=${q("creation_datetime ge '0001-01-01T00:00:00+01:00'")}`), 400, 'invalid_query');
      for (const query of [
        "creation_datetime eq '9999-12-31'",
        "creation_datetime lt '9999-12-31T23:00:00-14:00'",
        "creation_datetime in ['2000-01-01' to '99991231']",
      ]) {
        const res = await api('GET', `/portfolios/?query=${q(query)}`);
        assert.equal(res.status, 200, `${query}: ${res.text}`);
        assert.equal(res.body.count, query.includes(' eq ') ? 0 : 1, query);
      }
    });
  });

  describe('text no store can hold: NUL and unpaired surrogates', () => {
    it('in a query expression or another query parameter: 400 invalid_parameter with the loc of the parameter', async () => {
      const nul = await api('GET', `/users/?query=${q("first_name eq 'a\u0000b'")}`);
      assertProblem(nul, 400, 'invalid_parameter');
      assert.deepEqual(locs(nul), [['query', 'query']]);
      assert.match(nul.body.detail, /NUL character \(U\+0000\), found at character 16/);
      const embed = await api('GET', `/portfolios/?embed=${q('owned_by_user_id\u0000')}`);
      assertProblem(embed, 400, 'invalid_parameter');
      assert.deepEqual(locs(embed), [['query', 'embed']]);
    });

    it('in an entity field of a create: 422 validation_failed at the field, and no user is created', async () => {
      const before = await userCount();
      for (const value of ['a\\u0000b', '\\ud800', 'x\\udfffy']) {
        const res = await raw('POST', '/users/', `{"first_name": "${value}", "last_name": "Lovelace"}`);
        assertProblem(res, 422, 'validation_failed');
        assert.deepEqual(locs(res), [['body', 'first_name']], value);
      }
      const keyed = await raw('POST', '/users/', '{"first_name": "\\u0000", "last_name": "L"}', { 'idempotency-key': 'nul-1' });
      assertProblem(keyed, 422, 'validation_failed');
      assert.equal(await userCount(), before);
      // The key stored nothing: the same key with a good body is a first request.
      assert.equal((await api('POST', '/users/', build.user(), { 'idempotency-key': 'nul-1' })).status, 201);
    });

    it('in a field of a change, or in a field name: 422 at the value, and the entity reads back unchanged', async () => {
      const nul = await raw('PATCH', `/users/${user.id}`, '{"first_name": "Ad\\u0000a", "last_name": "\\ud83d"}');
      assertProblem(nul, 422, 'validation_failed');
      assert.deepEqual(locs(nul), [
        ['body', 'first_name'],
        ['body', 'last_name'],
      ]);
      const name = await raw('PATCH', `/users/${user.id}`, '{"feature_flags": [], "\\u0000": 1}');
      assertProblem(name, 422, 'validation_failed');
      assert.deepEqual(locs(name), [['body', '\u0000']]);
      const now = (await api('GET', `/users/${user.id}`)).body;
      assert.equal(now.version, user.version);
      assert.equal(now.first_name, user.first_name);
      assert.equal((await api('GET', `/users/${user.id}/versions/`)).body.count, 1);
    });

    it('in a login body: 422 at access_key_id (before any lookup), not a 500 or a 401', async () => {
      for (const value of ['A01\\u0000', '\\ud800']) {
        const res = await call(url('/auth/login/'), {
          rawBody: `{"access_key_id": "${value}", "secret_access_key": "x"}`,
          headers: { 'content-type': 'application/json' },
        });
        assertProblem(res, 422, 'validation_failed');
        assert.deepEqual(locs(res), [['body', 'access_key_id']]);
      }
      // The real key still logs in.
      assert.equal((await call(url('/auth/login/'), { body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret } })).status, 200);
    });

    it('in a path parameter, raw or as percent-encoding that is not UTF-8: 404 not_found', async () => {
      for (const id of ['%00', '%ED%A0%80', `${user.id}%ED%BF%BF`, '%E2%8', '%zz']) {
        assertProblem(await api('GET', `/users/${id}`), 404, 'not_found');
        assertProblem(await raw('PATCH', `/users/${id}`, '{"first_name": "x"}'), 404, 'not_found');
      }
      assert.equal((await api('GET', `/users/${user.id}`)).body.version, user.version);
    });
  });

  describe('numbers and nesting no contract allows in a body', () => {
    it('1e999 (Infinity once parsed): 422 at the field, nothing created', async () => {
      const res = await raw('POST', '/portfolios/', JSON.stringify(build.portfolio(user.id)).replace('"manager_version":1', '"manager_version":1e999'));
      assertProblem(res, 422, 'validation_failed');
      assert.deepEqual(locs(res), [['body', 'config', 'manager_version']]);
      assert.equal((await api('GET', '/portfolios/')).body.count, 1);
    });

    it('a body nested 100,000 levels deep: 422 where it goes past 64 levels, not a stack overflow; nothing created', async () => {
      const before = await userCount();
      const deep = `{"first_name": "a", "last_name": "b", "language": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      const res = await raw('POST', '/users/', deep);
      assertProblem(res, 422, 'validation_failed');
      assert.equal(res.body.errors[0].type, 'depth');
      assert.equal(res.body.errors[0].loc.length, 66);
      assert.equal(await userCount(), before);
    });
  });

  describe('integer parameters beyond what the store holds', () => {
    for (const path of [
      '/users/?offset=99999999999999999999',
      '/users/?offset=1e999',
      '/users/?offset=2147483648',
      '/portfolios/?offset=9223372036854775808',
    ]) {
      it(`${path}: 400 invalid_parameter at offset`, async () => {
        const res = await api('GET', path);
        assertProblem(res, 400, 'invalid_parameter');
        assert.deepEqual(locs(res), [['query', 'offset']]);
      });
    }

    it('version=99999999999999999999 and versions/?offset=…: 400 invalid_parameter', async () => {
      const version = await api('GET', `/users/${user.id}?version=99999999999999999999`);
      assertProblem(version, 400, 'invalid_parameter');
      assert.deepEqual(locs(version), [['query', 'version']]);
      assertProblem(await api('GET', `/users/${user.id}/versions/?offset=99999999999999999999`), 400, 'invalid_parameter');
    });

    it('the largest offset still answers an empty page', async () => {
      const res = await api('GET', '/users/?offset=2147483647');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.results, []);
    });
  });

  describe('GET /events/?after= out of the range or form of a cursor', () => {
    for (const after of [
      '99999999999999999999-1',
      '1-99999999999999999999',
      '18446744073709551616-0',
      '1-9223372036854775808',
      '-1-0',
      '1--1',
      '080-0',
      '1-01',
      'garbage',
      '1e999-0',
      '0x10-0',
    ]) {
      it(`after=${after}: 400 invalid_parameter at after`, async () => {
        const res = await api('GET', `/events/?after=${q(after)}`);
        assertProblem(res, 400, 'invalid_parameter');
        assert.deepEqual(locs(res), [['query', 'after']]);
      });
    }

    it('the largest cursors of the accepted form still page', async () => {
      for (const after of ['0-0', '9999999999999999999-999999999999999999']) {
        const res = await api('GET', `/events/?after=${after}`);
        assert.equal(res.status, 200, res.text);
      }
    });
  });

  describe('Content-Encoding', () => {
    it('gzip, deflate, br or zstd that does not decompress: 400 malformed_json, nothing created', async () => {
      const before = await userCount();
      for (const encoding of ['gzip', 'deflate', 'br', 'zstd']) {
        const res = await call(url('/users/'), {
          token: api.token,
          rawBody: 'not compressed',
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        });
        assertProblem(res, 400, 'malformed_json');
      }
      const cut = gzipSync(JSON.stringify(build.user())).subarray(0, 15);
      assertProblem(
        await call(url('/users/'), { token: api.token, rawBody: cut, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
        400,
        'malformed_json',
      );
      assert.equal(await userCount(), before);
    });

    it('an encoding the service does not know: 415 unsupported_media_type; real gzip and zstd bodies still work', async () => {
      const before = await userCount();
      for (const encoding of ['compress', 'x-nonsense', 'zstd, gzip']) {
        const res = await call(url('/users/'), {
          token: api.token,
          rawBody: JSON.stringify(build.user()),
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        });
        assertProblem(res, 415, 'unsupported_media_type');
      }
      const ok = await call(url('/users/'), {
        token: api.token,
        rawBody: gzipSync(JSON.stringify(build.user({ first_name: 'Zip' }))),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      assert.equal(ok.status, 201, ok.text);
      assert.equal(ok.body.first_name, 'Zip');
      const zstd = await call(url('/users/'), {
        token: api.token,
        rawBody: zstdCompressSync(JSON.stringify(build.user({ first_name: 'Zstd' }))),
        headers: { 'content-type': 'application/json', 'content-encoding': 'zstd' },
      });
      assert.equal(zstd.status, 201, zstd.text);
      assert.equal(zstd.body.first_name, 'Zstd');
      assert.equal(await userCount(), before + 2, 'the refused bodies created nothing');
    });
  });
});
