import assert from 'node:assert/strict';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

type Answer = Awaited<ReturnType<typeof call>>;
const q = encodeURIComponent;
const locs = (res: Answer) => res.body.errors.map((e: { loc: (string | number)[] }) => e.loc);
const quoted = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Identifiers that a person reads as one are one; look-alikes are refused (docs/adr/0040-identifiers-as-people-read-them.md). */
describe('identifiers and e-mails mean what a person means', () => {
  let platform: TestPlatform;
  let api: Api & { token: string };
  const everyUser = async () => (await api('GET', `/users/?limit=100&query=${q('deleted eq false or deleted eq true')}`)).body;
  const usersWhere = async (query: string) => (await api('GET', `/users/?limit=100&query=${q(query)}`)).body.results as { id: string }[];

  before(async () => {
    platform = await startTestPlatform();
    api = await machineApi(platform, await platform.tenant());
  });
  after(() => platform.stop());

  describe('the second external_id of each look-alike pair changes nothing', () => {
    const pairs: [string, string, string, number][] = [
      ['café in NFC, then in NFD', 'caf\u00e9', 'cafe\u0301', 409],
      ['café in NFD, then in NFC', 'th\u00e9-nfd'.normalize('NFD'), 'th\u00e9-nfd', 409],
      ['fullwidth letters', 'crm-1', '\uff43\uff52\uff4d-1', 422],
      ['a Cyrillic с among Latin letters', 'crm-2', '\u0441rm-2', 422],
      ['a zero-width space inside', 'crm-3', 'crm\u200b-3', 422],
      ['a trailing space', 'crm-4', 'crm-4 ', 422],
      ['the ﬁ ligature', 'profile-5', 'pro\ufb01le-5', 422],
    ];
    for (const [label, first, second, status] of pairs) {
      it(`${label}: ${status}`, async () => {
        const created = await api('POST', '/users/', build.user({ external_id: first }));
        assert.equal(created.status, 201, created.text);
        assert.equal(created.body.external_id, first.normalize('NFC'), 'stored in NFC');
        const before = await everyUser();

        const again = await api('POST', '/users/', build.user({ external_id: second }));
        if (status === 409) {
          assertProblem(again, 409, 'duplicate_value');
        } else {
          assertProblem(again, 422, 'validation_failed');
          assert.deepEqual(locs(again), [['body', 'external_id']]);
        }
        assert.deepEqual(await everyUser(), before, 'still the same users');
        const found = await usersWhere(`external_id eq ${quoted(first)}`);
        assert.deepEqual(
          found.map((u) => u.id),
          [created.body.id],
        );
      });
    }
  });

  it('external_ids differing in case are two ids (crm-X, CRM-X), each found by its own case', async () => {
    const lower = await api('POST', '/users/', build.user({ external_id: 'crm-X' }));
    const upper = await api('POST', '/users/', build.user({ external_id: 'CRM-X' }));
    assert.equal(lower.status, 201, lower.text);
    assert.equal(upper.status, 201, upper.text);
    assert.notEqual(lower.body.id, upper.body.id);
    assert.deepEqual(
      (await usersWhere("external_id eq 'crm-X'")).map((u) => u.id),
      [lower.body.id],
    );
    assert.deepEqual(
      (await usersWhere("external_id eq 'CRM-X'")).map((u) => u.id),
      [upper.body.id],
    );
  });

  it('finds an external_id by its NFC and its NFD form, and stores a PATCHed one in NFC', async () => {
    const nfd = 'Zo\u00eb-R\u00e9my'.normalize('NFD');
    const nfc = nfd.normalize('NFC');
    assert.notEqual(nfd, nfc);
    const created = await api('POST', '/users/', build.user({ external_id: nfd }));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.external_id, nfc);
    for (const form of [nfc, nfd]) {
      assert.deepEqual(
        (await usersWhere(`external_id eq ${quoted(form)}`)).map((u) => u.id),
        [created.body.id],
        `found by ${form === nfc ? 'NFC' : 'NFD'}`,
      );
      assert.deepEqual(
        (await usersWhere(`external_id in [${quoted(form)}, 'other']`)).map((u) => u.id),
        [created.body.id],
      );
    }
    const renamed = await api('PATCH', `/users/${created.body.id}`, { external_id: 'Ana-\u00efs'.normalize('NFD') });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.external_id, 'Ana-\u00efs');
    assert.equal((await api('GET', `/users/${created.body.id}`)).body.external_id, 'Ana-\u00efs');
  });

  describe('e-mail addresses', () => {
    it('differing only by case are one address: the second is a 409, the first is kept as sent and found in any case', async () => {
      const first = await api('POST', '/users/', build.user({ email: 'eve.S@ex.com' }));
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.email, 'eve.S@ex.com', 'stored as sent');
      const before = await everyUser();

      assertProblem(await api('POST', '/users/', build.user({ email: 'Eve.S@EX.com' })), 409, 'duplicate_value');
      assert.deepEqual(await everyUser(), before, 'still one user with the address');

      for (const form of ['eve.S@ex.com', 'EVE.s@EX.COM', 'eve.s*']) {
        assert.deepEqual(
          (await usersWhere(`email eq ${quoted(form)}`)).map((u) => u.id),
          [first.body.id],
          form,
        );
      }
    });

    it("taken by another user in another case: a PATCH is a 409 and changes nothing; the user's own address in another case keeps it", async () => {
      const eve = await api('POST', '/users/', build.user({ email: 'mallory.m@ex.com' }));
      const other = await api('POST', '/users/', build.user());
      assertProblem(await api('PATCH', `/users/${other.body.id}`, { email: 'Mallory.M@ex.com' }), 409, 'duplicate_value');
      const unchanged = await api('GET', `/users/${other.body.id}`);
      assert.equal(unchanged.body.email, null);
      assert.equal(unchanged.body.version, other.body.version);

      const same = await api('PATCH', `/users/${eve.body.id}`, { email: 'MALLORY.M@EX.COM', first_name: 'Eve' });
      assert.equal(same.status, 200, same.text);
      assert.equal(same.body.email, 'mallory.m@ex.com', 'the write-once address keeps its first spelling');
      assert.equal(same.body.first_name, 'Eve');
      assertProblem(await api('PATCH', `/users/${eve.body.id}`, { email: 'mallory.n@ex.com' }), 409, 'write_once_field');
    });
  });

  describe('invisible characters and white space at the ends are a 422 naming the field, and change nothing', () => {
    it('in the external_id and e-mail of a user, created or PATCHed', async () => {
      const before = await everyUser();
      for (const [body, loc] of [
        [{ external_id: 'crm\u200d7' }, ['body', 'external_id']],
        [{ external_id: '\ufeffcrm-7' }, ['body', 'external_id']],
        [{ external_id: 'crm-7\u202e' }, ['body', 'external_id']],
        [{ external_id: ' crm-7' }, ['body', 'external_id']],
        [{ email: 'eve\u200b@ex.com' }, ['body', 'email']],
        [{ email: 'eve@ex.com ' }, ['body', 'email']],
      ] as const) {
        const res = await api('POST', '/users/', build.user(body));
        assertProblem(res, 422, 'validation_failed');
        assert.deepEqual(locs(res), [loc], JSON.stringify(body));
      }
      assert.deepEqual(await everyUser(), before);

      const user = (await api('POST', '/users/', build.user({ external_id: 'crm-8' }))).body;
      const patched = await api('PATCH', `/users/${user.id}`, { external_id: 'crm-8\u2028' });
      assertProblem(patched, 422, 'validation_failed');
      assert.deepEqual(locs(patched), [['body', 'external_id']]);
      assert.match(patched.body.detail, /U\+2028/);
      const stored = (await api('GET', `/users/${user.id}`)).body;
      assert.equal(stored.external_id, 'crm-8');
      assert.equal(stored.version, user.version);
    });

    it("in another kind's external_id and a portfolio's broker ids", async () => {
      const owner = (await api('POST', '/users/', build.user())).body;
      const portfolios = async () => (await api('GET', `/portfolios/?limit=100&query=${q(`owned_by_user_id eq '${owner.id}'`)}`)).body;
      const before = await portfolios();
      for (const [over, loc] of [
        [{ external_id: 'acc\u200b-1' }, ['body', 'external_id']],
        [{ external_id: 'acc-1\t' }, ['body', 'external_id']],
        [{ brokerage_portfolio_id: 'brk-1 ' }, ['body', 'brokerage_portfolio_id']],
      ] as const) {
        const res = await api('POST', '/portfolios/', build.portfolio(owner.id, over));
        assertProblem(res, 422, 'validation_failed');
        assert.deepEqual(locs(res), [loc], JSON.stringify(over));
      }
      assert.deepEqual(await portfolios(), before);
      const policy = await api('POST', '/policies/', build.policy({ external_id: 'pol\u00ad1' }));
      assertProblem(policy, 422, 'validation_failed');
      assert.deepEqual(locs(policy), [['body', 'external_id']]);
    });
  });

  it("a deposit's data.external_id and a transaction's external_id: NFC and look-alikes as everywhere, the cash unchanged", async () => {
    const owner = (await api('POST', '/users/', build.user())).body;
    const portfolio = (await api('POST', '/portfolios/', build.portfolio(owner.id))).body;
    const deposit = (external_id: string) =>
      api('POST', '/events/deposit/', { data: { amount: '100.00', currency: 'EUR', portfolio: portfolio.id, external_id } });
    const state = async () => {
      const current = (await api('GET', `/portfolios/${portfolio.id}`)).body;
      const transactions = (await api('GET', `/portfolios/${portfolio.id}/transactions/?limit=100`)).body.results;
      return { portfolio: current.portfolio, version: current.version, transactions };
    };
    const first = await deposit('\u00fcberweisung-1');
    assert.equal(first.status, 201, first.text);
    const before = await state();

    const nfd = await deposit('\u00fcberweisung-1'.normalize('NFD'));
    assertProblem(nfd, 409, 'duplicate_value');
    for (const id of ['\uff55berweisung-1', 'berweisung\u200b-1', 'berweisung-1 ']) {
      const refused = await deposit(id);
      assertProblem(refused, 422, 'validation_failed');
      assert.deepEqual(locs(refused), [['body', 'data', 'external_id']], id);
    }
    const transaction = await api('POST', `/portfolios/${portfolio.id}/transactions/`, build.transaction({ external_id: '\u0441b-7' }));
    assertProblem(transaction, 422, 'validation_failed');
    assert.deepEqual(locs(transaction), [['body', 'external_id']]);
    assert.deepEqual(await state(), before, 'no booking, the cash as it was');
  });

  it('a JSON body that is not UTF-8 is a 400 invalid_encoding naming the byte, and creates nothing', async () => {
    const before = await everyUser();
    // "café" in Latin-1: the é is the single byte E9, which starts no UTF-8 sequence here.
    const latin1 = Buffer.concat([Buffer.from('{"first_name": "Ada", "external_id": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const res = await call(`${platform.managementUrl}/users/`, {
      method: 'POST',
      rawBody: latin1,
      token: api.token,
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(res, 400, 'invalid_encoding');
    assert.match(res.body.detail, new RegExp(`offset ${latin1.indexOf(0xe9)} \\(line 1\\)`));
    assert.deepEqual(await everyUser(), before);
    assert.deepEqual(await usersWhere("external_id eq 'caf\ufffd'"), []);
  });
});
