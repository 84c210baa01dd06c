import assert from 'node:assert/strict';
import { createLogger } from '@platform/shared';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { expireAssessments } from '../../src/jobs/assessment-expiry.ts';
import { inTenant } from '../../src/store/tenant-scope.ts';

const DAY_MS = 86_400_000;
const questionnaire = {
  name: 'Suitability',
  validity_days: 30,
  questions: [{ id: 'loss_reaction', text: { en: 'Drop of 20%?' }, type: 'SINGLE_CHOICE', options: [{ value: 'HOLD', label: { en: 'Hold' }, score: 10 }] }],
};

/** The expiry job (docs/adr/0027-assessments.md) with an injected clock: ACCEPTED → EXPIRED once the validity ends. */
describe('assessment expiry job', function () {
  this.timeout(120_000);
  const logger = createLogger('test', 'error');
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: Api;

  before(async () => {
    platform = await startTestPlatform();
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
  });
  after(() => platform?.stop());

  const created = async (path: string, body: unknown) => {
    const res = await api('POST', path, body);
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  /** A profile whose assessment was accepted just now; answers its id and expiry. */
  const acceptedProfile = async () => {
    const q = await created('/suitability-profiler/questionnaires/', questionnaire);
    const profile = await created('/suitability-profiler/profiles/', { user_id: await created('/users/', build.user()), questionnaire_id: q });
    const path = `/suitability-profiler/profiles/${profile}/assessments/`;
    assert.equal((await api('POST', path, {})).status, 201);
    const res = await api('PATCH', `${path}${q}`, { answers: { loss_reaction: 'HOLD' }, status: 'COMPLETED' });
    const accepted = await api('PATCH', `${path}${q}`, { status: 'ACCEPTED' });
    assert.equal(accepted.status, 200, res.text + accepted.text);
    return { profile, expires: Date.parse(accepted.body.assessments[0].expires_datetime) };
  };
  const profileOf = async (id: string) => (await api('GET', `/suitability-profiler/profiles/${id}`)).body;
  const statusEvents = async (id: string) =>
    (await platform.database.db('outbox').where({ tenant_id: tenant.tenantId, entity_id: id, action: 'assessment-status-update' }).orderBy('seq')).map(
      (row: { envelope: { data: { value: string; accepted_datetime?: string } } }) => row.envelope.data,
    );
  const run = (at: number) => expireAssessments({ db: platform.database.db, logger, now: () => new Date(at) });

  it('leaves an assessment ACCEPTED until its expires_datetime, then makes it EXPIRED once, with its event', async () => {
    const { profile, expires } = await acceptedProfile();
    assert.equal(expires - Date.now() > 29 * DAY_MS, true);
    const before = await profileOf(profile);

    assert.equal(await run(expires - 1), 0);
    assert.deepEqual(await profileOf(profile), before);

    assert.ok(((await run(expires)) ?? 0) >= 1);
    const after = await profileOf(profile);
    assert.equal(after.version, before.version + 1);
    assert.equal(after.assessments[0].status, 'EXPIRED');
    assert.equal(after.assessments[0].accepted_datetime, before.assessments[0].accepted_datetime, 'kept when EXPIRED');
    const events = await statusEvents(profile);
    assert.deepEqual(
      events.map((e) => e.value),
      ['IN_PROGRESS', 'COMPLETED', 'ACCEPTED', 'EXPIRED'],
    );
    assert.equal('accepted_datetime' in events[3]!, false, 'accepted_datetime only when ACCEPTED');

    assert.equal(await run(expires + DAY_MS), 0, 'an EXPIRED assessment is left alone');
    assert.equal((await profileOf(profile)).version, after.version);
  });

  it('does nothing while another replica holds the lock', async () => {
    const { profile, expires } = await acceptedProfile();
    const db = platform.database.db;
    await db.transaction(async (other) => {
      await other.raw('select pg_advisory_xact_lock(270027)');
      assert.equal(await run(expires + DAY_MS), null);
    });
    assert.equal((await profileOf(profile)).assessments[0].status, 'ACCEPTED');
    assert.ok(((await run(expires + DAY_MS)) ?? 0) >= 1);
    assert.equal((await profileOf(profile)).assessments[0].status, 'EXPIRED');
  });

  it('expires every due profile, page after page', async () => {
    const profiles = [await acceptedProfile(), await acceptedProfile(), await acceptedProfile()];
    const latest = Math.max(...profiles.map((p) => p.expires));
    const expired = await expireAssessments({ db: platform.database.db, logger, batch: 1, now: () => new Date(latest) });
    assert.ok((expired ?? 0) >= 3);
    for (const { profile } of profiles) assert.equal((await profileOf(profile)).assessments[0].status, 'EXPIRED');
  });

  it('an EXPIRED assessment stops the optimization of the portfolio it onboarded until the customer is assessed again', async () => {
    const policy = await created('/policies/', build.policy());
    await created('/risk-profiles/', { name: 'Balanced', score: 0, risk_level: 4, policy_id: policy });
    const user = await created('/users/', build.user());
    const portfolio = await created('/portfolios/', build.roboPortfolio(user));
    const q = await created('/suitability-profiler/questionnaires/', questionnaire);
    const profile = await created('/suitability-profiler/profiles/', { user_id: user, questionnaire_id: q, portfolio_id: portfolio });
    const path = `/suitability-profiler/profiles/${profile}/assessments/`;
    const assess = async () => {
      assert.equal((await api('POST', path, {})).status, 201);
      assert.equal((await api('PATCH', `${path}${q}`, { answers: { loss_reaction: 'HOLD' }, status: 'COMPLETED' })).status, 200);
      const accepted = await api('PATCH', `${path}${q}`, { status: 'ACCEPTED' });
      assert.equal(accepted.status, 200, accepted.text);
      return Date.parse(accepted.body.assessments[0].expires_datetime);
    };
    const expires = await assess();
    assert.equal((await api('GET', `/portfolios/${portfolio}`)).body.config.manager_settings.policy_id, policy);
    const optimizations = async () => (await api('GET', `/portfolios/${portfolio}/optimizations/`)).body.count as number;
    const countBefore = await optimizations();

    assert.ok(((await run(expires)) ?? 0) >= 1);
    const refused = await api('POST', `/portfolios/${portfolio}/optimizations/`, {});
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.code, 'state_conflict');
    assert.match(refused.body.detail, new RegExp(`suitability profile ${profile} has no ACCEPTED assessment \\(EXPIRED\\)`));
    assert.equal(await optimizations(), countBefore, 'no optimization was created');
    // Visible on the portfolio: its profile, embedded, shows the EXPIRED assessment, and the expiry was announced for it.
    const seen = await api('GET', `/portfolios/${portfolio}?embed=config.manager_settings.suitability_profile_id`);
    assert.equal(seen.body._embedded[profile].assessments[0].status, 'EXPIRED', seen.text);
    const announced = await platform.database.db('outbox').where({ tenant_id: tenant.tenantId, entity_id: portfolio, action: 'profile-updated-for-portfolio' });
    assert.ok(announced.length >= 2, 'accepted and expired');

    await assess();
    const open = await api('POST', `/portfolios/${portfolio}/optimizations/`, {});
    assert.equal(open.status, 202, open.text);
    assert.equal(open.body.status, 'PENDING');
  });

  it('finds the due profiles through their index (migrations/014), under row-level security', async () => {
    const plan = await inTenant(platform.database.db, tenant.tenantId, async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      const query = trx('entities')
        .select('id')
        .where({ tenant_id: tenant.tenantId, type: 'suitability-profiles', deleted: false })
        .whereRaw('assessment_next_expiry(doc) is not null and assessment_next_expiry(doc) <= ?', [new Date().toISOString()])
        .toQuery();
      const { rows } = await trx.raw(`explain ${query}`);
      return rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
    });
    assert.match(plan, /entities_assessment_expiry/, plan);
  });
});
