import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { created, eventIdsAbout, everyVersion, got, wholeFeed } from './export-helpers.ts';

const option = (value: string, score: number) => ({ value, label: { en: value }, score });
const questionnaire = {
  name: 'Suitability',
  questions: [{ id: 'experience', text: { en: 'Experience?' }, type: 'SINGLE_CHOICE', options: [option('NONE', 0), option('SOME', 4)] }],
};

/** GET /users/{user_id}/export/ (docs/adr/0060-personal-data-export.md): what is in it, and who may ask. */
describe('personal data export', function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let api: Api;
  let ada: string;
  let bob: string;
  let adaPortfolios: string[];
  let adaTransactions: Record<string, string[]>;
  let adaProfile: string;
  let withdrawal: any;
  let bobIds: string[];

  before(async () => {
    platform = await startTestPlatform();
    api = await machineApi(platform, await platform.tenant(undefined, { brokerIntegration: 'CLIENT' }));
    ada = await created(api, '/users/', build.user({ email: 'ada@example.com' }));
    assert.equal((await api('PATCH', `/users/${ada}`, { language: 'en-GB' })).status, 200);
    assert.equal((await api('PATCH', `/users/${ada}`, { first_name: 'Augusta' })).status, 200);
    const q = await created(api, '/suitability-profiler/questionnaires/', questionnaire);
    adaProfile = await created(api, '/suitability-profiler/profiles/', { user_id: ada, questionnaire_id: q });
    const assessment = `/suitability-profiler/profiles/${adaProfile}/assessments/`;
    assert.equal((await api('POST', assessment, {})).status, 201);
    assert.equal((await api('PATCH', `${assessment}${q}`, { answers: { experience: 'SOME' } })).status, 200);

    adaPortfolios = [await created(api, '/portfolios/', build.portfolio(ada)), await created(api, '/portfolios/', build.portfolio(ada, { name: 'House' }))];
    assert.equal((await api('PATCH', `/portfolios/${adaPortfolios[0]}`, { name: 'Retirement' })).status, 200);
    adaTransactions = {};
    for (const [i, p] of adaPortfolios.entries()) {
      adaTransactions[p] = [];
      for (let n = 0; n <= i + 1; n++)
        adaTransactions[p].push(await created(api, `/portfolios/${p}/transactions/`, build.transaction({ external_id: `t-${i}-${n}` })));
    }
    const [firstPortfolio] = adaPortfolios;
    const firstTransaction = adaTransactions[firstPortfolio!]![0];
    assert.equal((await api('PATCH', `/portfolios/${firstPortfolio}/transactions/${firstTransaction}`, { quantity: '99.25' })).status, 200);
    const w = await api('POST', '/events/withdraw/', { data: { amount: '10.00', currency: 'EUR', portfolio: firstPortfolio, external_id: 'wd-1' } });
    assert.equal(w.status, 201, w.text);
    withdrawal = w.body;

    bob = await created(api, '/users/', build.user({ first_name: 'Bob' }));
    const bobPortfolio = await created(api, '/portfolios/', build.portfolio(bob));
    bobIds = [bob, bobPortfolio, await created(api, `/portfolios/${bobPortfolio}/transactions/`, build.transaction())];
  });
  after(() => platform?.stop());

  const exportOf = (as: Api, userId: string) => as('GET', `/users/${userId}/export/`);

  it("holds the user, its portfolios, transactions, withdrawal, profile and events exactly as the GETs answer them, and nobody else's", async () => {
    const res = await exportOf(api, ada);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('content-disposition'), `attachment; filename="user-${ada}-export.json"`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const doc = res.body;

    assert.equal(doc.export.format_version, 1);
    assert.equal(doc.export.user_id, ada);
    assert.match(doc.export.exported_datetime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(typeof doc.export.tenant_id, 'string');
    for (const section of Object.keys(doc)) assert.equal(typeof doc.export.sections[section], 'string', `section ${section} is described`);

    assert.deepEqual(doc.user, await got(api, `/users/${ada}`));
    assert.equal(doc.user_versions.length, 3);
    assert.deepEqual(doc.user_versions, await everyVersion(api, `/users/${ada}`));

    const profilePath = `/suitability-profiler/profiles/${adaProfile}`;
    assert.deepEqual(doc.suitability_profiles, [{ profile: await got(api, profilePath), versions: await everyVersion(api, profilePath) }]);
    assert.deepEqual(doc.suitability_profiles[0].profile.assessments[0].answers, { experience: 'SOME' });

    assert.deepEqual(
      doc.portfolios.map((p: any) => p.portfolio.id),
      [...adaPortfolios].sort(),
    );
    for (const part of doc.portfolios) {
      const id = part.portfolio.id as string;
      assert.deepEqual(part.portfolio, await got(api, `/portfolios/${id}`));
      assert.deepEqual(part.versions, await everyVersion(api, `/portfolios/${id}`));
      const expected = [];
      for (const t of [...adaTransactions[id]!].sort()) {
        const path = `/portfolios/${id}/transactions/${t}`;
        expected.push({ transaction: await got(api, path), versions: await everyVersion(api, path) });
      }
      assert.deepEqual(part.transactions, expected);
      assert.deepEqual(part.optimizations, []);
      assert.deepEqual(part.withdrawals, id === adaPortfolios[0] ? [withdrawal] : []);
      assert.ok(Array.isArray(part.broker_instructions));
    }
    assert.equal(doc.portfolios[adaPortfolios[0]! < adaPortfolios[1]! ? 0 : 1].versions.length, 2);

    const about = [ada, adaProfile, ...adaPortfolios, ...Object.values(adaTransactions).flat()];
    const ids = new Set((await Promise.all(about.map((id) => eventIdsAbout(api, id)))).flat());
    const expectedEvents = (await wholeFeed(api)).filter((e) => ids.has(e.id));
    // The portfolios' creations, the assessment's start and the withdrawal's notification at least.
    assert.deepEqual(new Set(expectedEvents.map((e) => e.subject)), new Set(['portfolios', 'assessments', 'notifications']));
    assert.deepEqual(doc.events, expectedEvents);

    for (const id of bobIds) assert.equal(res.text.includes(id), false, `${id} of another user is absent`);
  });

  it('a customer exports their own data; another customer is 403 and nothing changes', async () => {
    const asAda = await userApi(platform, api, ada);
    const own = await exportOf(asAda, ada);
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.body.user, await got(api, `/users/${ada}`));
    assert.equal(own.body.portfolios.length, 2);

    const feedBefore = (await wholeFeed(api)).length;
    const bobBefore = await got(api, `/users/${bob}`);
    const refused = await exportOf(asAda, bob);
    assertProblem(refused, 403, 'forbidden');
    assert.equal(refused.headers.get('content-disposition'), null);
    assert.equal(refused.text.includes('Bob'), false);
    assert.deepEqual(await got(api, `/users/${bob}`), bobBefore);
    assert.equal((await wholeFeed(api)).length, feedBefore);
  });

  it("another tenant's client, an unknown user and a malformed id are 404", async () => {
    const other = await machineApi(platform, await platform.tenant());
    const foreign = await exportOf(other, ada);
    assertProblem(foreign, 404, 'not_found');
    assert.equal(foreign.text.includes('Augusta'), false);
    assertProblem(await exportOf(api, 'U01HZC48CNR9YNY5M4C8F5S2HT8'), 404, 'not_found');
    assertProblem(await exportOf(api, 'P01HZC48CNR9YNY5M4C8F5S2HT8'), 404, 'not_found');
    assertProblem(await exportOf(api, 'U1'), 404, 'not_found');
  });

  it('a deleted user exports too, as deleted', async () => {
    const gone = await created(api, '/users/', build.user());
    const portfolio = await created(api, '/portfolios/', build.portfolio(gone));
    assert.equal((await api('DELETE', `/users/${gone}`)).status, 200);
    const res = await exportOf(api, gone);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.user.deleted, true);
    assert.deepEqual(res.body.user, await got(api, `/users/${gone}`));
    assert.deepEqual(
      res.body.portfolios.map((p: any) => p.portfolio.id),
      [portfolio],
    );
  });
});
