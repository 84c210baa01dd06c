import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

const account = { bank_account_number: 'DE89370400440532013000', bank_account_number_type: 'IBAN' };
let seq = 0;
const unique = () => `${Date.now()}${seq++}`;

describe('users', () => {
  let platform: TestPlatform;
  let api: Api;
  before(async () => {
    platform = await startTestPlatform();
    api = await machineApi(platform, await platform.tenant());
  });
  after(() => platform.stop());

  it('creates a user from an empty object with the documented defaults', async () => {
    const res = await api('POST', '/users/', {});
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('location'), `/users/${res.body.id}`);
    assert.match(res.body.id, /^U[0-9A-HJKMNP-TV-Z]{26}$/);
    const { id, creation_datetime, version_datetime, ...rest } = res.body;
    assert.equal(creation_datetime, version_datetime);
    assert.match(creation_datetime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(rest, {
      external_id: null,
      first_name: null,
      last_name: null,
      email: null,
      phone: null,
      language: null,
      counter_account: null,
      feature_flags: [],
      status: 'WAITING_FOR_VERIFICATION',
      brokerage_user_id: null,
      idp_user_id: null,
      products: [],
      version: 1,
      version_authored_by_user_id: null,
      deleted: false,
      readable_by: [id],
      modifiable_by: [id],
      _embedded: {},
    });
  });

  describe('field rules: each accepted and refused', () => {
    const cases: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
      ['phone in international format', { phone: '+4915112345678' }, { phone: '015112345678' }, 'body.phone'],
      ['email', { email: 'ada@example.com' }, { email: 'not-an-email' }, 'body.email'],
      ['first_name up to 128 characters', { first_name: 'a'.repeat(128) }, { first_name: 'a'.repeat(129) }, 'body.first_name'],
      ['last_name up to 128 characters', { last_name: 'b'.repeat(128) }, { last_name: 'b'.repeat(129) }, 'body.last_name'],
      ['external_id up to 64 characters', { external_id: 'e'.repeat(64) }, { external_id: 'e'.repeat(65) }, 'body.external_id'],
      ['language xx-XX', { language: 'de-DE' }, { language: 'german' }, 'body.language'],
      ['feature_flags enum', { feature_flags: ['ROBO_ADVISOR', 'CONSOLE'] }, { feature_flags: ['TRADING'] }, 'body.feature_flags.0'],
      ['status enum', { status: 'WAITING_FOR_SIGNATURE' }, { status: 'SLEEPING' }, 'body.status'],
      [
        'counter account number',
        { counter_account: account },
        { counter_account: { ...account, bank_account_number: 'de89' } },
        'body.counter_account.bank_account_number',
      ],
      [
        'counter account type enum',
        { counter_account: { ...account, bank_account_number_type: 'ABA' } },
        { counter_account: { ...account, bank_account_number_type: 'SWIFT' } },
        'body.counter_account.bank_account_number_type',
      ],
      [
        'bank_id: ABA routing number or BIC',
        { counter_account: { ...account, bank_id: '021000021' } },
        { counter_account: { ...account, bank_id: '12345' } },
        'body.counter_account.bank_id',
      ],
      [
        'bank_id as BIC',
        { counter_account: { ...account, bank_id: 'COBADEFFXXX', bank_id_type: 'BIC' } },
        { counter_account: { ...account, bank_id_type: 'IBAN' } },
        'body.counter_account.bank_id_type',
      ],
      ['unknown fields', { first_name: 'x' }, { nickname: 'x' }, 'body.nickname'],
    ];
    for (const [name, good, bad, loc] of cases) {
      it(name, async () => {
        const ok = await api('POST', '/users/', good);
        assert.equal(ok.status, 201, ok.text);
        const refused = await api('POST', '/users/', bad);
        assertProblem(refused, 422, 'validation_failed');
        assert.ok(
          refused.body.errors.some((e: { loc: unknown[] }) => e.loc.join('.') === loc),
          `${loc} in ${JSON.stringify(refused.body.errors)}`,
        );
        const patched = await api('PATCH', `/users/${ok.body.id}`, bad);
        assertProblem(patched, 422, 'validation_failed');
        assert.equal((await api('GET', `/users/${ok.body.id}`)).body.version, 1, 'a refused PATCH changes nothing');
      });
    }
  });

  it('accepts the sample spelling bank_account_type and stores bank_account_number_type', async () => {
    const res = await api('POST', '/users/', { counter_account: { bank_account_number: account.bank_account_number, bank_account_type: 'IBAN' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.counter_account, { ...account, bank_id: null, bank_id_type: null });
  });

  it('keeps email and phone write-once: a change is a 409, the same value or a first value passes', async () => {
    const email = `w${unique()}@example.com`;
    const user = (await api('POST', '/users/', { email })).body;
    assertProblem(await api('PATCH', `/users/${user.id}`, { email: `other${unique()}@example.com` }), 409, 'write_once_field');
    assertProblem(await api('PATCH', `/users/${user.id}`, { email: null }), 409, 'write_once_field');
    assert.equal((await api('PATCH', `/users/${user.id}`, { email, first_name: 'Ada' })).status, 200);
    const phone = `+4916${unique().slice(-9)}`;
    assert.equal((await api('PATCH', `/users/${user.id}`, { phone })).body.phone, phone);
    assertProblem(await api('PATCH', `/users/${user.id}`, { phone: '+4917000000000' }), 409, 'write_once_field');
  });

  it('keeps external_id, email and phone unique in the tenant (409), not across tenants', async () => {
    const external_id = `crm-${unique()}`;
    const email = `u${unique()}@example.com`;
    const phone = `+4917${unique().slice(-9)}`;
    assert.equal((await api('POST', '/users/', { external_id, email, phone })).status, 201);
    for (const [field, body] of [
      ['external_id', { external_id }],
      ['email', { email }],
      ['phone', { phone }],
    ] as const) {
      const res = await api('POST', '/users/', body);
      assertProblem(res, 409, 'duplicate_value');
      assert.deepEqual(res.body.errors[0].loc, ['body', field]);
    }
    const other = (await api('POST', '/users/', {})).body;
    assertProblem(await api('PATCH', `/users/${other.id}`, { external_id }), 409, 'duplicate_value');
    const elsewhere = await machineApi(platform, await platform.tenant());
    assert.equal((await elsewhere('POST', '/users/', { external_id, email, phone })).status, 201);
  });

  it('requires email and phone with create_idp_user=true, then refuses it as the contract says: no identity provider is managed', async () => {
    const res = await api('POST', '/users/?create_idp_user=true', { email: `i${unique()}@example.com` });
    assertProblem(res, 422, 'validation_failed');
    assert.deepEqual(res.body.errors[0].loc, ['body', 'phone']);
    const email = `i${unique()}@example.com`;
    const both = await api('POST', '/users/?create_idp_user=true', { email, phone: `+4918${unique().slice(-9)}` });
    assertProblem(both, 422, 'validation_failed');
    assert.deepEqual(both.body.errors[0].loc, ['query', 'create_idp_user']);
    assert.equal((await api('GET', `/users/?query=${encodeURIComponent(`email eq '${email}'`)}`)).body.count, 0, 'nothing created');
  });

  it('takes a PATCH as application/merge-patch+json as well as application/json, validated alike; other media types stay 415', async () => {
    const merge = { 'content-type': 'application/merge-patch+json' };
    const user = (await api('POST', '/users/', {})).body;
    const item = `/users/${user.id}`;
    const res = await api('PATCH', item, { first_name: 'Grace', language: 'en-GB' }, merge);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual([res.body.first_name, res.body.language, res.body.version], ['Grace', 'en-GB', 2]);
    const cleared = await api('PATCH', item, { language: null }, { 'content-type': 'application/merge-patch+json; charset=utf-8' });
    assert.deepEqual([cleared.status, cleared.body.language], [200, null]);
    const bad = await api('PATCH', item, { language: 'english', extra: 1 }, merge);
    assertProblem(bad, 422, 'validation_failed');
    assert.deepEqual(bad.body.errors.map((e: { loc: string[] }) => e.loc.join('.')).sort(), ['body.extra', 'body.language']);
    assertProblem(
      await api('PATCH', item, [{ op: 'replace', path: '/first_name', value: 'X' }], { 'content-type': 'application/json-patch+json' }),
      415,
      'unsupported_media_type',
    );
    assertProblem(await api('POST', '/users/', {}, merge), 415, 'unsupported_media_type');
    assert.equal((await api('GET', item)).body.version, 3, 'refused requests changed nothing');
  });

  it('replaces the counter account whole and lets status be patched in any order', async () => {
    const user = (await api('POST', '/users/', { counter_account: { ...account, bank_id: 'COBADEFFXXX', bank_id_type: 'BIC' } })).body;
    const next = await api('PATCH', `/users/${user.id}`, { counter_account: account, status: 'ACTIVE' });
    assert.deepEqual(next.body.counter_account, { ...account, bank_id: null, bank_id_type: null });
    assert.equal((await api('PATCH', `/users/${user.id}`, { status: 'WAITING_FOR_VERIFICATION' })).body.status, 'WAITING_FOR_VERIFICATION');
  });

  it('refuses to embed a field that is no reference (400 naming embed)', async () => {
    const user = (await api('POST', '/users/', {})).body;
    const res = await api('GET', `/users/${user.id}?embed=counter_account`);
    assertProblem(res, 400, 'invalid_parameter');
    assert.deepEqual(res.body.errors[0].loc, ['query', 'embed']);
  });

  it('deletes by setting deleted, still answers GET, and refuses further changes', async () => {
    const user = (await api('POST', '/users/', build.user())).body;
    const deleted = await api('DELETE', `/users/${user.id}`);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.deleted, true);
    assert.equal(deleted.body.version, 2);
    assert.equal((await api('GET', `/users/${user.id}`)).body.deleted, true);
    assert.equal((await api('DELETE', `/users/${user.id}`)).body.version, 2, 'deleting again changes nothing');
    assertProblem(await api('PATCH', `/users/${user.id}`, { first_name: 'x' }), 409, 'state_conflict');
  });
});
