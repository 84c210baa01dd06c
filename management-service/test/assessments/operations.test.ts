import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';

const option = (value: string, score: number) => ({ value, label: { en: value }, score });
const questionnaireBody = (over: Record<string, unknown> = {}) => ({
  name: 'Suitability',
  max_attempts: 2,
  cooldown_days: 30,
  validity_days: 365,
  questions: [
    { id: 'experience', text: { en: 'Experience?' }, type: 'SINGLE_CHOICE', options: [option('NONE', 0), option('SOME', 4)] },
    { id: 'horizon_years', text: { en: 'Horizon?' }, type: 'NUMBER' },
    { id: 'loss_reaction', text: { en: 'Drop of 20%?' }, type: 'SINGLE_CHOICE', options: [option('SELL', 0), option('HOLD', 10)] },
  ],
  ...over,
});
const ANSWERS = { experience: 'SOME', horizon_years: 15, loss_reaction: 'HOLD' };

/** The two assessment operations over HTTP (docs/adr/0027-assessments.md), against real Postgres. */
describe('assessment operations', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: Api;
  let other: Api;

  before(async () => {
    platform = await startTestPlatform();
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
    other = await machineApi(platform, await platform.tenant());
  });
  after(() => platform?.stop());

  const created = async (path: string, body: unknown, as: Api = api) => {
    const res = await as('POST', path, body);
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  /** A user with a profile (linked to a portfolio when asked) for a new questionnaire. */
  const world = async (over: Record<string, unknown> = {}) => {
    const user = await created('/users/', build.user());
    const questionnaire = await created('/suitability-profiler/questionnaires/', questionnaireBody(over));
    const profile = await created('/suitability-profiler/profiles/', { user_id: user, questionnaire_id: questionnaire });
    return { user, questionnaire, profile, path: `/suitability-profiler/profiles/${profile}/assessments/` };
  };
  const events = async (profile: string) =>
    (await platform.database.db('outbox').where({ tenant_id: tenant.tenantId, entity_id: profile, action: 'assessment-status-update' }).orderBy('seq')).map(
      (row: { envelope: { subject: string; data: Record<string, unknown> } }): Record<string, unknown> => ({
        subject: row.envelope.subject,
        ...row.envelope.data,
      }),
    );
  const profileOf = async (profile: string) => (await api('GET', `/suitability-profiler/profiles/${profile}`)).body;

  it('start → answer → complete → accept: each status change stored and announced, accepted_datetime only when ACCEPTED', async () => {
    const w = await world();
    const started = await api('POST', w.path, {});
    assert.equal(started.status, 201, started.text);
    assert.equal(started.headers.get('location'), `${w.path}${w.questionnaire}`);
    assert.equal(started.body.assessments[0].status, 'IN_PROGRESS');
    assert.equal(started.body.assessments[0].attempts, 1);

    const answered = await api('PATCH', `${w.path}${w.questionnaire}`, { answers: { experience: 'SOME', horizon_years: 15 } });
    assert.equal(answered.status, 200, answered.text);
    assert.deepEqual(answered.body.assessments[0].answers, { experience: 'SOME', horizon_years: 15 });

    const done = await api('PATCH', `${w.path}${w.questionnaire}`, { answers: { loss_reaction: 'HOLD' }, status: 'COMPLETED' });
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.assessments[0].status, 'COMPLETED');
    assert.equal(done.body.assessments[0].score, 14);

    const accepted = await api('PATCH', `${w.path}${w.questionnaire}`, { status: 'ACCEPTED' }, { 'If-Match': `"${done.body.version}"` });
    assert.equal(accepted.status, 200, accepted.text);
    const a = accepted.body.assessments[0];
    assert.equal(a.status, 'ACCEPTED');
    assert.equal(Date.parse(a.expires_datetime) - Date.parse(a.accepted_datetime), 365 * 86_400_000);

    const seen = await events(w.profile);
    assert.deepEqual(
      seen.map((e) => [e.subject, e.value, e.questionnaire_id, e.profile_id, 'accepted_datetime' in e]),
      [
        ['assessments', 'IN_PROGRESS', w.questionnaire, w.profile, false],
        ['assessments', 'COMPLETED', w.questionnaire, w.profile, false],
        ['assessments', 'ACCEPTED', w.questionnaire, w.profile, true],
      ],
    );
    assert.equal(seen[2]!.accepted_datetime, a.accepted_datetime);
  });

  it('refuses a bad answer with 422 at the question and an illegal move with 409 naming the status, changing nothing', async () => {
    const w = await world();
    await api('POST', w.path, {});
    const before = await profileOf(w.profile);
    const eventsBefore = await events(w.profile);

    const bad = await api('PATCH', `${w.path}${w.questionnaire}`, { answers: { horizon_years: 'long' } });
    assertProblem(bad, 422, 'validation_failed');
    assert.deepEqual(bad.body.errors[0].loc, ['body', 'answers', 'horizon_years']);
    const unknown = await api('PATCH', `${w.path}${w.questionnaire}`, { answers: { risk_appetite: 'HIGH' } });
    assertProblem(unknown, 422, 'validation_failed');
    const incomplete = await api('PATCH', `${w.path}${w.questionnaire}`, { answers: { experience: 'SOME' }, status: 'COMPLETED' });
    assertProblem(incomplete, 422, 'validation_failed');
    assert.deepEqual(incomplete.body.errors[0].loc, ['body', 'answers', 'horizon_years']);
    const accept = await api('PATCH', `${w.path}${w.questionnaire}`, { status: 'ACCEPTED' });
    assertProblem(accept, 409, 'state_conflict');
    assert.match(accept.body.detail, /IN_PROGRESS/);
    const again = await api('POST', w.path, {});
    assertProblem(again, 409, 'state_conflict');

    assert.deepEqual(await profileOf(w.profile), before);
    assert.deepEqual(await events(w.profile), eventsBefore);
  });

  it('restarts a COMPLETED assessment, then goes to COOLDOWN beyond max_attempts and refuses further starts', async () => {
    const w = await world();
    const complete = () => api('PATCH', `${w.path}${w.questionnaire}`, { answers: ANSWERS, status: 'COMPLETED' });
    await api('POST', w.path, {});
    assert.equal((await complete()).status, 200);
    const restarted = await api('POST', w.path, {});
    assert.equal(restarted.status, 201, restarted.text);
    assert.equal(restarted.body.assessments[0].attempts, 2);
    assert.deepEqual(restarted.body.assessments[0].answers, {});
    assert.equal((await complete()).status, 200);
    const cooling = await api('POST', w.path, {});
    assert.equal(cooling.status, 201, cooling.text);
    assert.equal(cooling.body.assessments[0].status, 'COOLDOWN');
    assert.equal(Date.parse(cooling.body.assessments[0].cooldown_end_datetime) - Date.now() > 29 * 86_400_000, true);
    const refused = await api('POST', w.path, {});
    assertProblem(refused, 409, 'state_conflict');
    assert.match(refused.body.detail, /COOLDOWN/);
    assert.deepEqual(
      (await events(w.profile)).map((e) => e.value),
      ['IN_PROGRESS', 'COMPLETED', 'IN_PROGRESS', 'COMPLETED', 'COOLDOWN'],
    );
  });

  it('lets the customer answer their own profile only; another tenant sees 404; an unknown assessment is 404', async () => {
    const w = await world();
    const asOwner = await userApi(platform, api, w.user);
    const stranger = await userApi(platform, api, await created('/users/', build.user({ first_name: 'Eve' })));
    const start = await asOwner('POST', w.path, {});
    assert.equal(start.status, 201, start.text);
    const answered = await asOwner('PATCH', `${w.path}${w.questionnaire}`, { answers: ANSWERS, status: 'COMPLETED' });
    assert.equal(answered.status, 200, answered.text);

    const before = await profileOf(w.profile);
    assertProblem(await stranger('PATCH', `${w.path}${w.questionnaire}`, { status: 'ACCEPTED' }), 403, 'forbidden');
    assertProblem(await stranger('POST', w.path, {}), 403, 'forbidden');
    assertProblem(await other('PATCH', `${w.path}${w.questionnaire}`, { status: 'ACCEPTED' }), 404, 'not_found');
    assertProblem(await other('POST', w.path, {}), 404, 'not_found');
    assert.deepEqual(await profileOf(w.profile), before);

    const none = await api('PATCH', `${w.path}Q01HZRR9SQ1Z6MVX81DFQX1ETVA`, { status: 'COMPLETED' });
    assertProblem(none, 404, 'not_found');
    const noQuestionnaire = await api('POST', w.path, { questionnaire_id: 'Q01HZRR9SQ1Z6MVX81DFQX1ETVA' });
    assertProblem(noQuestionnaire, 422, 'validation_failed');
  });

  it('the customer accepting an assessment of a linked profile gives the robo portfolio its risk profile, score and policy: WAITING_FOR_POLICY → WAITING_FOR_FUNDS', async () => {
    const own = await platform.tenant(undefined, { brokerIntegration: 'CLIENT' });
    const as = await machineApi(platform, own);
    const make = async (path: string, body: unknown) => {
      const res = await as('POST', path, body);
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    const policy = await make('/policies/', build.policy());
    const defensive = await make('/risk-profiles/', { name: 'Defensive', score: 0, risk_level: 2, policy_id: null });
    const balanced = await make('/risk-profiles/', { name: 'Balanced', score: 10, risk_level: 4, policy_id: policy });
    await make('/risk-profiles/', { name: 'Dynamic', score: 20, risk_level: 6, policy_id: null });
    const user = await make('/users/', build.user());
    const portfolio = await make('/portfolios/', build.roboPortfolio(user));
    assert.equal((await as('GET', `/portfolios/${portfolio}`)).body.status, 'WAITING_FOR_POLICY');
    const q = await make('/suitability-profiler/questionnaires/', questionnaireBody());
    const profile = await make('/suitability-profiler/profiles/', { user_id: user, questionnaire_id: q, portfolio_id: portfolio });
    const path = `/suitability-profiler/profiles/${profile}/assessments/`;
    assert.equal((await as('POST', path, {})).status, 201);
    const done = await as('PATCH', `${path}${q}`, { answers: ANSWERS, status: 'COMPLETED' });
    assert.equal(done.body.assessments[0].score, 14);
    assert.equal((await as('GET', `/portfolios/${portfolio}`)).body.status, 'WAITING_FOR_POLICY', 'nothing before ACCEPTED');

    const seqBefore = Number((await platform.database.db('outbox').where({ tenant_id: own.tenantId }).max('seq as m'))[0]!.m);
    const asCustomer = await userApi(platform, as, user);
    const accepted = await asCustomer('PATCH', `${path}${q}`, { status: 'ACCEPTED' });
    assert.equal(accepted.status, 200, accepted.text);
    const after = (await as('GET', `/portfolios/${portfolio}`)).body;
    assert.equal(after.status, 'WAITING_FOR_FUNDS');
    const settings = after.config.manager_settings;
    assert.deepEqual(
      [settings.suitability_profile_id, settings.risk_profile_id, settings.risk_profile_score, settings.policy_id],
      [profile, balanced, 10, policy],
    );
    assert.notEqual(settings.risk_profile_id, defensive);
    const found = await as('GET', `/portfolios/?query=${encodeURIComponent(`config.manager_settings.suitability_profile_id eq '${profile}'`)}`);
    assert.deepEqual(
      found.body.results.map((r: { id: string }) => r.id),
      [portfolio],
      found.text,
    );

    const events = (await platform.database.db('outbox').where({ tenant_id: own.tenantId }).where('seq', '>', seqBefore).orderBy('seq')).map(
      (row: { envelope: { subject: string; action: string; data: Record<string, unknown> } }) =>
        `${row.envelope.subject}.${row.envelope.action}${row.envelope.action.endsWith('status-update') ? `:${String(row.envelope.data.value)}` : ''}`,
    );
    assert.ok(events.includes('portfolios.profile-updated-for-portfolio'), events.join());
    assert.ok(events.includes('assessments.assessment-status-update:ACCEPTED'), events.join());
    assert.ok(events.includes('portfolios.status-update:WAITING_FOR_FUNDS'), events.join());
    assert.ok(events.indexOf('assessments.assessment-status-update:ACCEPTED') < events.indexOf('portfolios.status-update:WAITING_FOR_FUNDS'), events.join());
  });

  it('keeps an attempt on the questions of the questionnaire version it started with; the next attempt takes the new ones', async () => {
    const w = await world();
    const started = await api('POST', w.path, {});
    assert.equal(started.body.assessments[0].questionnaire_version, 1);
    // The questionnaire drops loss_reaction and gains a required question while the attempt runs.
    const changed = await api('PATCH', `/suitability-profiler/questionnaires/${w.questionnaire}`, {
      questions: [
        { id: 'experience', text: { en: 'Experience?' }, type: 'SINGLE_CHOICE', options: [option('NONE', 0), option('SOME', 100)] },
        { id: 'age', text: { en: 'Age?' }, type: 'NUMBER', minimum: 18 },
      ],
    });
    assert.equal(changed.status, 200, changed.text);
    const done = await api('PATCH', `${w.path}${w.questionnaire}`, { answers: ANSWERS, status: 'COMPLETED' });
    assert.equal(done.status, 200, done.text);
    assert.deepEqual([done.body.assessments[0].status, done.body.assessments[0].score], ['COMPLETED', 14], 'scored by version 1');

    const next = await api('POST', w.path, {});
    assert.equal(next.body.assessments[0].questionnaire_version, 2);
    const old = await api('PATCH', `${w.path}${w.questionnaire}`, { answers: { loss_reaction: 'HOLD' } });
    assertProblem(old, 422, 'validation_failed');
    assert.deepEqual(old.body.errors[0].loc, ['body', 'answers', 'loss_reaction']);
    const young = await api('PATCH', `${w.path}${w.questionnaire}`, { answers: { age: 17 } });
    assertProblem(young, 422, 'validation_failed');
    assert.deepEqual(young.body.errors[0].loc, ['body', 'answers', 'age']);
    const now = await api('PATCH', `${w.path}${w.questionnaire}`, { answers: { experience: 'SOME', age: 40 }, status: 'COMPLETED' });
    assert.equal(now.body.assessments[0].score, 100, now.text);
  });

  it('refuses a questionnaire that breaks its rules at the place in the body, storing nothing', async () => {
    const count = async () => (await api('GET', '/suitability-profiler/questionnaires/')).body.count as number;
    const before = await count();
    for (const [body, loc] of [
      [questionnaireBody({ questions: [{ id: 'age', text: { en: 'Age?' }, type: 'NUMBER', minimum: 65, maximum: 18 }] }), ['body', 'questions', 0, 'maximum']],
      [questionnaireBody({ questions: [{ id: 'goal', text: { en: 'Goal?' }, type: 'SINGLE_CHOICE' }] }), ['body', 'questions', 0, 'options']],
      [
        questionnaireBody({
          sections: [{ id: 'goals', title: { en: 'Goals' } }],
          questions: [{ id: 'ok', text: { en: '?' }, type: 'BOOLEAN', section: 'risk' }],
        }),
        ['body', 'questions', 0, 'section'],
      ],
    ] as const) {
      const res = await api('POST', '/suitability-profiler/questionnaires/', body);
      assertProblem(res, 422, 'validation_failed');
      assert.deepEqual(res.body.errors[0].loc, loc, res.text);
    }
    assert.equal(await count(), before);
  });

  it('gives every new tenant the default questionnaire, which a customer can answer to the end', async () => {
    const own = await platform.tenant();
    const as = await machineApi(platform, own);
    const found = await as('GET', `/suitability-profiler/questionnaires/?query=${encodeURIComponent("external_id eq 'default-suitability'")}`);
    assert.equal(found.body.count, 1, found.text);
    const q = found.body.results[0];
    assert.deepEqual(
      q.sections.map((s: { id: string }) => s.id),
      ['knowledge', 'experience', 'financial_situation', 'goals', 'loss_tolerance'],
    );
    const user = (await as('POST', '/users/', build.user())).body.id as string;
    const profile = (await as('POST', '/suitability-profiler/profiles/', { user_id: user, questionnaire_id: q.id })).body.id as string;
    const customer = await userApi(platform, as, user);
    const path = `/suitability-profiler/profiles/${profile}/assessments/`;
    assert.equal((await customer('POST', path, {})).status, 201);
    const answers = {
      products_understood: ['FUNDS', 'SHARES'],
      risk_and_return: 'MORE_RISK',
      years_investing: '3_TO_10',
      trades_per_year: '1_TO_10',
      annual_income: 52000,
      share_of_assets: '10_TO_25',
      emergency_reserve: 'YES',
      other_debts: false,
      goal: 'GROWTH',
      horizon: 'OVER_10',
      loss_reaction: 'HOLD',
      bearable_loss: 'UP_TO_20',
    };
    const negative = await customer('PATCH', `${path}${q.id}`, { answers: { annual_income: -1 } });
    assertProblem(negative, 422, 'validation_failed');
    assert.deepEqual(negative.body.errors[0].loc, ['body', 'answers', 'annual_income']);
    const done = await customer('PATCH', `${path}${q.id}`, { answers, status: 'COMPLETED' });
    assert.equal(done.status, 200, done.text);
    // 3+3 + 5 + 8 + 3 + 8 + 5 + 10 + 15 + 10 + 10
    assert.equal(done.body.assessments[0].score, 80);
  });
});
