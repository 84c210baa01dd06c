import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import type { Assessment } from '../../src/domain/assessments.ts';
import { StateConflict } from '../../src/domain/errors.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { startAssessment, updateAssessment } from '../../src/flows/assessments.ts';
import { inTenant } from '../../src/store/tenant-scope.ts';

const DAY_MS = 86_400_000;
const T0 = Date.parse('2027-01-01T00:00:00.000Z');
const day = (n: number, ms = 0) => new Date(T0 + n * DAY_MS + ms).toISOString();

/**
 * The assessment operations (docs/adr/0027-assessments.md) with the clock in the test's hand: the flows take `now`,
 * so a cool-down and an expiry are crossed to the millisecond against real Postgres, without waiting.
 */
describe('assessments on a controlled clock', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: Api;
  let principal: Principal;

  before(async () => {
    platform = await startTestPlatform();
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
    principal = { tenantId: tenant.tenantId, kind: 'machine', subject: tenant.accessKeyId };
  });
  after(() => platform?.stop());

  const created = async (path: string, body: unknown) => {
    const res = await api('POST', path, body);
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  const world = async () => {
    const q = await created('/suitability-profiler/questionnaires/', {
      name: 'Short',
      validity_days: 10,
      cooldown_days: 7,
      max_attempts: 2,
      questions: [{ id: 'loss_reaction', text: { en: 'Drop?' }, type: 'SINGLE_CHOICE', options: [{ value: 'HOLD', label: { en: 'Hold' }, score: 10 }] }],
    });
    const profile = await created('/suitability-profiler/profiles/', { user_id: await created('/users/', build.user()), questionnaire_id: q });
    return { q, profile };
  };
  const at = <T>(now: string, work: (scope: Parameters<typeof startAssessment>[0]) => Promise<T>) =>
    inTenant(platform.database.db, tenant.tenantId, (trx, settings) => work({ trx, tenant: settings, principal, now }));
  const assessment = (row: { doc: Record<string, unknown> }) => (row.doc.assessments as Assessment[])[0]!;
  const start = async (w: { q: string; profile: string }, now: string) => assessment((await at(now, (s) => startAssessment(s, w.profile, undefined))).row);
  const patch = async (w: { q: string; profile: string }, now: string, body: Parameters<typeof updateAssessment>[3]) =>
    assessment(await at(now, (s) => updateAssessment(s, w.profile, w.q, body, undefined)));
  const statuses = async (profile: string) =>
    (await platform.database.db('outbox').where({ tenant_id: tenant.tenantId, entity_id: profile, action: 'assessment-status-update' }).orderBy('seq')).map(
      (row: { envelope: { data: { value: string } } }) => row.envelope.data.value,
    );

  it('a cool-down refuses starts until its end to the millisecond, then begins again at attempt 1', async () => {
    const w = await world();
    await start(w, day(0));
    await patch(w, day(0), { answers: { loss_reaction: 'HOLD' }, status: 'COMPLETED' });
    assert.equal((await start(w, day(1))).attempts, 2);
    await patch(w, day(1), { answers: { loss_reaction: 'HOLD' }, status: 'COMPLETED' });
    const cooling = await start(w, day(2));
    assert.deepEqual([cooling.status, cooling.cooldown_end_datetime], ['COOLDOWN', day(9)]);

    await assert.rejects(
      () => start(w, day(9, -1)),
      (error: unknown) => error instanceof StateConflict && /is COOLDOWN.*2027-01-10T00:00:00.000Z/.test(error.message),
    );
    const again = await start(w, day(9));
    assert.deepEqual([again.status, again.attempts, again.started_datetime], ['IN_PROGRESS', 1, day(9)]);
    // Through HTTP (the real clock, in 2026, long before this cool-down's end) the profile says the same.
    const seen = await api('GET', `/suitability-profiler/profiles/${w.profile}`);
    assert.equal(seen.body.assessments[0].status, 'IN_PROGRESS');
    assert.deepEqual(await statuses(w.profile), ['IN_PROGRESS', 'COMPLETED', 'IN_PROGRESS', 'COMPLETED', 'COOLDOWN', 'IN_PROGRESS']);
  });

  it('an ACCEPTED assessment past its validity is EXPIRED for every change, even before the job ran, and its expiry is announced first', async () => {
    const w = await world();
    await start(w, day(0));
    await patch(w, day(0), { answers: { loss_reaction: 'HOLD' }, status: 'COMPLETED' });
    const accepted = await patch(w, day(0, 5), { status: 'ACCEPTED' });
    assert.equal(accepted.expires_datetime, day(10, 5));
    await assert.rejects(() => patch(w, day(10, 4), { answers: { loss_reaction: 'HOLD' } }), /is ACCEPTED/);
    await assert.rejects(() => patch(w, day(10, 5), { answers: { loss_reaction: 'HOLD' } }), /is EXPIRED/);
    const restarted = await start(w, day(10, 5));
    assert.deepEqual([restarted.status, restarted.attempts], ['IN_PROGRESS', 2]);
    assert.deepEqual(await statuses(w.profile), ['IN_PROGRESS', 'COMPLETED', 'ACCEPTED', 'EXPIRED', 'IN_PROGRESS']);
    // A refused change stored nothing: over HTTP the same move is refused the same way.
    const refused = await api('PATCH', `/suitability-profiler/profiles/${w.profile}/assessments/${w.q}`, { status: 'ACCEPTED' });
    assertProblem(refused, 409, 'state_conflict');
    assert.match(refused.body.detail, /is IN_PROGRESS/);
  });
});
