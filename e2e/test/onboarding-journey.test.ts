import assert from 'node:assert/strict';
import type { components } from '@platform/api-types/management';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { managementClient } from '../src/clients.ts';
import { eurEtfModel, type SampleModel } from '../src/sample-model.ts';
import { eventsSettled } from '@platform/test-support/database';

// The suitability onboarding journey through the generated, contract-checked client
// (docs/adr/0027-assessments.md): a new tenant's default questionnaire, its risk profiles as score
// bands onto a policy, a robo portfolio WAITING_FOR_POLICY linked to a suitability profile, the
// customer's own assessment (start, a refused answer, answers, completion, acceptance), the
// portfolio given its risk profile and policy (WAITING_FOR_FUNDS), a deposit that activates it,
// and who may not touch the assessment. Every outbound event of the profile and the portfolio is
// asserted, in order, through GET /events/.
//
// The platform is the default one (the run's shared NATS, the optimizer off): the journey ends at
// the first deposit and follows no optimization, so the deposit's optimization stays PENDING and
// announces nothing (only a SUCCESS is announced, docs/adr/0021-optimizations.md).

type Client = ReturnType<typeof managementClient>;
type Event = { id: string; subject: string; action: string; data: Record<string, unknown> };
type Questionnaire = components['schemas']['Questionnaire'];

const DAY_MS = 86_400_000;

describe('suitability onboarding journey (generated client)', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let model: SampleModel;

  // The journey's state, built step by step by the tests below (they run in order).
  let machine: Client;
  let questionnaireId: string;
  let policyId: string;
  let bands: { defensive: string; balanced: string; aggressive: string };
  let userId: string;
  let customer: Client;
  let portfolioId: string;
  let profileId: string;
  /** Every event of the profile and the portfolio seen so far, in feed order. */
  const seen: Event[] = [];
  let cursor: string | undefined;

  const login = async (tenant: { accessKeyId: string; secret: string }) => {
    const res = await managementClient(platform.managementUrl).POST('/auth/login/', {
      body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret },
    });
    assert.equal(res.response.status, 200);
    return managementClient(platform.managementUrl, res.data!.access_token);
  };
  /** An end user's own token, issued to the machine client through POST /auth/user-token/. */
  const tokenOf = async (user: string) => {
    const res = await machine.POST('/auth/user-token/', { body: { user_id: user } });
    assert.equal(res.response.status, 200);
    return managementClient(platform.managementUrl, res.data!.access_token);
  };
  const created = <T extends { response: Response; data?: { id: string } }>(res: T, what: string) => {
    assert.equal(res.response.status, 201, `${what} created`);
    return res.data!.id;
  };

  /** The profile and portfolio events since the previous call (`<subject>.<action>[=value]`), read by the machine client. */
  const events = async () => {
    await eventsSettled(platform.database.db);
    const page = await machine.GET('/events/', { params: { query: { limit: 1000, ...(cursor ? { after: cursor } : {}) } } });
    assert.equal(page.response.status, 200);
    cursor = page.data!.next_cursor;
    const mine = (page.data!.results as unknown as Event[]).filter(
      (e) => e.data.id === portfolioId || e.data.portfolio_id === portfolioId || e.data.profile_id === profileId,
    );
    seen.push(...mine);
    return mine.map(name);
  };
  const name = (e: Event) => `${e.subject}.${e.action}${e.data.value === undefined ? '' : `=${String(e.data.value)}`}`;

  const profile = async (as: Client = machine) => {
    const res = await as.GET('/suitability-profiler/profiles/{profile_id}/', { params: { path: { profile_id: profileId } } });
    assert.equal(res.response.status, 200);
    return res.data!;
  };
  const assessmentOf = (p: Awaited<ReturnType<typeof profile>>) => {
    assert.equal(p.assessments.length, 1, 'one assessment: the default questionnaire');
    return p.assessments[0]!;
  };
  const portfolio = async () => {
    const res = await machine.GET('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: portfolioId } } });
    assert.equal(res.response.status, 200);
    return res.data!;
  };
  const start = (as: Client) => as.POST('/suitability-profiler/profiles/{profile_id}/assessments/', { params: { path: { profile_id: profileId } }, body: {} });
  const patch = (as: Client, body: components['schemas']['AssessmentPatch']) =>
    as.PATCH('/suitability-profiler/profiles/{profile_id}/assessments/{questionnaire_id}', {
      params: { path: { profile_id: profileId, questionnaire_id: questionnaireId } },
      body,
    });

  /** A call refused with `status` and `code`, made after the profile is read: the profile as it was and no new event. */
  const refused = async (call: () => Promise<{ response: Response; error?: { code: string } }>, status: number, code: string) => {
    const before = await profile();
    const res = await call();
    assert.deepEqual([res.response.status, res.error?.code], [status, code]);
    assert.deepEqual(await profile(), before, 'the profile is unchanged');
    assert.deepEqual(await events(), [], 'nothing announced');
  };

  // All required questions of the default questionnaire (management-service/src/domain/default-questionnaire.ts),
  // in two patches. Score: products_understood SAVINGS 0 + FUNDS 3, risk_and_return MORE_RISK 5, years_investing
  // UP_TO_3 4, trades_per_year 1_TO_10 3, annual_income (a NUMBER, no score), share_of_assets 25_TO_50 5,
  // emergency_reserve YES 5, other_debts (a BOOLEAN, no score), goal INCOME 5, horizon 5_TO_10 10, loss_reaction
  // SELL_SOME 5, bearable_loss UP_TO_10 5: 3 + 5 + 4 + 3 + 5 + 5 + 5 + 10 + 5 + 5 = 50, in the Balanced band [40, 80).
  const FIRST_ANSWERS = {
    products_understood: ['SAVINGS', 'FUNDS'],
    risk_and_return: 'MORE_RISK',
    years_investing: 'UP_TO_3',
    trades_per_year: '1_TO_10',
    annual_income: 48_000,
    share_of_assets: '25_TO_50',
  };
  const LAST_ANSWERS = {
    emergency_reserve: 'YES',
    other_debts: false,
    goal: 'INCOME',
    horizon: '5_TO_10',
    loss_reaction: 'SELL_SOME',
    bearable_loss: 'UP_TO_10',
  };
  const SCORE = 50;

  before(async () => {
    platform = await startTestPlatform();
    model = await eurEtfModel(platform.dataUrl, await platform.tenant());
  });
  after(() => platform?.stop());

  it('1. a new tenant already has the default questionnaire, scores 0–100', async () => {
    machine = await login(await platform.tenant(undefined, { brokerIntegration: 'CLIENT' }));
    const found = await machine.GET('/suitability-profiler/questionnaires/', { params: { query: { query: "external_id eq 'default-suitability'" } } });
    assert.equal(found.response.status, 200);
    assert.equal(found.data!.count, 1);
    const q = found.data!.results[0] as Questionnaire;
    questionnaireId = q.id;
    assert.equal(q.version, 1);
    assert.equal(q.validity_days, 365);
    assert.deepEqual(
      q.questions.map((question) => [question.id, question.type, question.required]),
      [
        ['products_understood', 'MULTIPLE_CHOICE', true],
        ['risk_and_return', 'SINGLE_CHOICE', true],
        ['years_investing', 'SINGLE_CHOICE', true],
        ['trades_per_year', 'SINGLE_CHOICE', true],
        ['annual_income', 'NUMBER', true],
        ['share_of_assets', 'SINGLE_CHOICE', true],
        ['emergency_reserve', 'SINGLE_CHOICE', true],
        ['other_debts', 'BOOLEAN', true],
        ['goal', 'SINGLE_CHOICE', true],
        ['horizon', 'SINGLE_CHOICE', true],
        ['loss_reaction', 'SINGLE_CHOICE', true],
        ['bearable_loss', 'SINGLE_CHOICE', true],
        ['remarks', 'TEXT', false],
      ],
    );
    // The highest score: every option of the multiple choice, the best option of each single choice.
    const best = (question: Questionnaire['questions'][number]) => {
      const scores = (question.options ?? []).map((o) => o.score);
      return question.type === 'MULTIPLE_CHOICE' ? scores.reduce((a, b) => a + b, 0) : Math.max(0, ...scores);
    };
    const maximum = q.questions.map(best).reduce((a, b) => a + b, 0);
    assert.equal(maximum, 100);
  });

  it('2. the machine client creates the policy, the risk profiles as score bands, the user, the robo portfolio and its suitability profile', async () => {
    policyId = created(
      await machine.POST('/policies/', {
        body: {
          name: 'Balanced',
          config: {
            minimum_funding_amount: '1000',
            cash_buffer: 0.02,
            rebalancing_threshold: 0.05,
            transaction_cost_bps: 10,
            model_portfolio: { [model.equity[0]!]: 0.4, [model.equity[1]!]: 0.2, [model.bonds[0]!]: 0.38 },
            asset_class_bands: { EQUITY: [0.5, 0.7], FIXED_INCOME: [0.28, 0.48] },
          },
        },
      }),
      'policy',
    );
    const riskProfile = async (name: string, score: number, risk_level: number, policy_id: string | null) =>
      created(await machine.POST('/risk-profiles/', { body: { name, score, risk_level, policy_id } }), `risk profile ${name}`);
    bands = {
      defensive: await riskProfile('Defensive', 0, 2, null),
      balanced: await riskProfile('Balanced', 40, 4, policyId),
      aggressive: await riskProfile('Aggressive', 80, 6, null),
    };
    userId = created(await machine.POST('/users/', { body: { first_name: 'Ada', last_name: 'Lovelace', external_id: 'crm-1' } }), 'user');
    const robo = await machine.POST('/portfolios/', {
      body: {
        name: 'Pension',
        external_id: 'pf-1',
        owned_by_user_id: userId,
        base_currency: 'EUR',
        money_type: 'REAL_MONEY',
        config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: {} },
      },
    });
    portfolioId = created(robo, 'portfolio');
    assert.equal(robo.data!.status, 'WAITING_FOR_POLICY', 'a robo portfolio without a policy');
    const linked = await machine.POST('/suitability-profiler/profiles/', {
      body: { user_id: userId, questionnaire_id: questionnaireId, portfolio_id: portfolioId },
    });
    profileId = created(linked, 'suitability profile');
    assert.deepEqual(
      [linked.data!.version, linked.data!.user_id, linked.data!.portfolio_id, linked.data!.questionnaire_id, linked.data!.assessments],
      [1, userId, portfolioId, questionnaireId, []],
    );
    assert.deepEqual(await events(), ['portfolios.creation', 'portfolios.profile-created-for-portfolio']);
    assert.deepEqual(seen[1]!.data, {
      id: portfolioId,
      external_id: 'pf-1',
      owned_by_user_id: userId,
      owned_by_external_user_id: 'crm-1',
      suitability_profile_id: profileId,
    });
  });

  it('3. the customer starts, is refused a bad answer, answers, completes and accepts their assessment', async () => {
    customer = await tokenOf(userId);

    const started = await start(customer);
    assert.equal(started.response.status, 201);
    assert.equal(started.response.headers.get('location'), `/suitability-profiler/profiles/${profileId}/assessments/${questionnaireId}`);
    const first = assessmentOf(started.data!);
    assert.deepEqual(
      [first.questionnaire_id, first.status, first.attempts, first.questionnaire_version, first.answers, first.score, first.accepted_datetime],
      [questionnaireId, 'IN_PROGRESS', 1, 1, {}, null, null],
    );
    assert.equal(started.data!.version, 2);
    assert.deepEqual(await events(), ['portfolios.profile-updated-for-portfolio', 'assessments.assessment-status-update=IN_PROGRESS']);

    // The yearly income is a NUMBER of at least 0.
    const before = await profile(customer);
    const bad = await patch(customer, { answers: { annual_income: -5 } });
    assert.deepEqual([bad.response.status, bad.error?.code], [422, 'validation_failed']);
    assert.deepEqual(bad.error!.errors![0]!.loc, ['body', 'answers', 'annual_income']);
    assert.deepEqual(await profile(customer), before, 'the profile is unchanged, same version');
    assert.equal(before.version, 2);
    assert.deepEqual(await events(), []);

    const answered = await patch(customer, { answers: FIRST_ANSWERS });
    assert.equal(answered.response.status, 200);
    assert.deepEqual([assessmentOf(answered.data!).status, assessmentOf(answered.data!).answers], ['IN_PROGRESS', FIRST_ANSWERS]);
    // Completing before every required question is answered: 422 at the first unanswered one.
    const early = await patch(customer, { status: 'COMPLETED' });
    assert.deepEqual(
      [early.response.status, early.error?.code, early.error?.errors?.[0]?.loc],
      [422, 'validation_failed', ['body', 'answers', 'emergency_reserve']],
    );

    const completed = await patch(customer, { answers: LAST_ANSWERS, status: 'COMPLETED' });
    assert.equal(completed.response.status, 200);
    const done = assessmentOf(completed.data!);
    assert.deepEqual([done.status, done.score, done.answers], ['COMPLETED', SCORE, { ...FIRST_ANSWERS, ...LAST_ANSWERS }]);
    assert.ok(done.completed_datetime !== null);
    assert.equal((await portfolio()).status, 'WAITING_FOR_POLICY', 'nothing reaches the portfolio before ACCEPTED');
    assert.deepEqual(await events(), [
      'portfolios.profile-updated-for-portfolio',
      'portfolios.profile-updated-for-portfolio',
      'assessments.assessment-status-update=COMPLETED',
    ]);

    // Nobody but the customer (or the tenant's machine client) may accept it: another customer of
    // the same tenant is forbidden, another tenant does not see it (docs/adr/0001-customer-rights.md,
    // docs/adr/0027-assessments.md).
    const stranger = await tokenOf(created(await machine.POST('/users/', { body: { first_name: 'Eve', last_name: 'Stranger' } }), 'user'));
    const otherTenant = await login(await platform.tenant(undefined, { brokerIntegration: 'CLIENT' }));
    await refused(() => patch(stranger, { status: 'ACCEPTED' }), 403, 'forbidden');
    await refused(() => patch(otherTenant, { status: 'ACCEPTED' }), 404, 'not_found');

    const accepted = await patch(customer, { status: 'ACCEPTED' });
    assert.equal(accepted.response.status, 200);
    const a = assessmentOf(accepted.data!);
    assert.deepEqual([a.status, a.score, a.attempts], ['ACCEPTED', SCORE, 1]);
    assert.ok(a.accepted_datetime !== null && Math.abs(Date.parse(a.accepted_datetime) - Date.now()) < 60_000, `accepted_datetime ${a.accepted_datetime}`);
    assert.equal(Date.parse(a.expires_datetime!) - Date.parse(a.accepted_datetime), 365 * DAY_MS, 'valid for the validity_days of the questionnaire');
  });

  it('4. the accepted score gives the portfolio its suitability profile, the Balanced risk profile and its policy: WAITING_FOR_FUNDS', async () => {
    const p = await portfolio();
    assert.equal(p.status, 'WAITING_FOR_FUNDS');
    const s = p.config.manager_settings;
    assert.deepEqual(
      [s.suitability_profile_id, s.risk_profile_id, s.risk_profile_score, s.policy_id],
      [profileId, bands.balanced, 40, policyId],
      `score ${SCORE} falls in the band of Balanced (40), not Defensive (0) or Aggressive (80)`,
    );
    const found = await machine.GET('/portfolios/', {
      params: { query: { query: `config.manager_settings.suitability_profile_id eq '${profileId}'` } },
    });
    assert.equal(found.response.status, 200);
    assert.deepEqual(
      found.data!.results.map((r) => r.id),
      [portfolioId],
    );
    assert.equal(found.data!.count, 1);

    // The acceptance in one transaction: the profile's new version, its assessment's status, then the portfolio's status.
    assert.deepEqual(await events(), [
      'portfolios.profile-updated-for-portfolio',
      'assessments.assessment-status-update=ACCEPTED',
      'portfolios.status-update=WAITING_FOR_FUNDS',
    ]);
  });

  it('5. a deposit of the minimum funding amount activates the portfolio', async () => {
    const deposit = await machine.POST('/events/deposit/', {
      params: { header: { 'Idempotency-Key': 'dep-1' } },
      body: { data: { amount: '1000.00', currency: 'EUR', portfolio: portfolioId, external_id: 'dep-1' } },
    });
    assert.equal(deposit.response.status, 201, 'the middleware reports a settled deposit');
    const p = await portfolio();
    assert.equal(p.status, 'ACTIVE');
    assert.deepEqual(p.portfolio, { $EUR: 1000 });
    assert.ok(p.funded_since !== null);
    assert.equal(p.config.manager_settings.policy_id, policyId, 'the onboarding policy stays');
    assert.deepEqual(await events(), ['portfolios.status-update=ACTIVE', 'notifications.deposit-received']);
    assert.equal(seen.at(-1)!.data.transaction_id, deposit.data!.id);
    // The deposit asked for the first investment; with the optimizer off it stays PENDING, unannounced.
    const optimizations = await machine.GET('/portfolios/{portfolio_id}/optimizations/', { params: { path: { portfolio_id: portfolioId } } });
    assert.equal(optimizations.response.status, 200);
    assert.deepEqual(
      optimizations.data!.results.map((o) => o.status),
      ['PENDING'],
    );
  });

  it('6. every event of the profile and the portfolio, in order, through GET /events/', async () => {
    const accepted = assessmentOf(await profile());
    assert.deepEqual(seen.map(name), [
      'portfolios.creation',
      'portfolios.profile-created-for-portfolio',
      'portfolios.profile-updated-for-portfolio', // start
      'assessments.assessment-status-update=IN_PROGRESS',
      'portfolios.profile-updated-for-portfolio', // the first answers
      'portfolios.profile-updated-for-portfolio', // the last answers and COMPLETED
      'assessments.assessment-status-update=COMPLETED',
      'portfolios.profile-updated-for-portfolio', // ACCEPTED
      'assessments.assessment-status-update=ACCEPTED',
      'portfolios.status-update=WAITING_FOR_FUNDS',
      'portfolios.status-update=ACTIVE',
      'notifications.deposit-received',
    ]);
    // The assessment events name the profile and the questionnaire; accepted_datetime only on ACCEPTED.
    assert.deepEqual(
      seen.filter((e) => e.subject === 'assessments').map((e) => e.data),
      [
        { profile_id: profileId, questionnaire_id: questionnaireId, value: 'IN_PROGRESS' },
        { profile_id: profileId, questionnaire_id: questionnaireId, value: 'COMPLETED' },
        { profile_id: profileId, questionnaire_id: questionnaireId, value: 'ACCEPTED', accepted_datetime: accepted.accepted_datetime },
      ],
    );
    for (const e of seen.filter((e) => e.action.startsWith('profile-'))) assert.equal(e.data.suitability_profile_id, profileId);
    // The feed from its start agrees with the pages read step by step.
    cursor = undefined;
    const all = seen.splice(0);
    assert.deepEqual(await events(), all.map(name));
    assert.deepEqual(
      seen.map((e) => e.id),
      all.map((e) => e.id),
    );
  });

  it('7. another customer is forbidden and another tenant sees nothing; the profile stays as it is', async () => {
    const stranger = await tokenOf(created(await machine.POST('/users/', { body: { first_name: 'Mallory', last_name: 'Stranger' } }), 'user'));
    const otherTenant = await login(await platform.tenant(undefined, { brokerIntegration: 'CLIENT' }));
    const before = await profile();
    await refused(() => start(stranger), 403, 'forbidden');
    await refused(() => patch(stranger, { answers: { annual_income: 1 } }), 403, 'forbidden');
    await refused(() => start(otherTenant), 404, 'not_found');
    await refused(() => patch(otherTenant, { answers: { annual_income: 1 } }), 404, 'not_found');
    const hidden = await otherTenant.GET('/suitability-profiler/profiles/{profile_id}/', { params: { path: { profile_id: profileId } } });
    assert.deepEqual([hidden.response.status, hidden.error?.code], [404, 'not_found']);
    const after = await profile();
    assert.deepEqual(after, before);
    assert.equal(assessmentOf(after).status, 'ACCEPTED');
  });
});
