import assert from 'node:assert/strict';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

// docs/adr/0063-deposit-round-trips.md: what a deposit costs in database round trips, read from the service's own
// metric (http_request_database_round_trips, a group of statements sent together is one), so that it cannot grow
// back unnoticed. A count, not a timing: bench:deposits measures the speed.

/** The round trips and requests counted for `operation` in a Prometheus text answer. */
function counted(text: string, operation: string): { sum: number; count: number } {
  const value = (suffix: string) =>
    Number(new RegExp(`^http_request_database_round_trips_${suffix}\\{[^}]*operation="${operation}"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { sum: value('sum'), count: value('count') };
}

describe('round trips of a deposit (docs/adr/0063-deposit-round-trips.md)', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let api: Api;
  let owner: string;

  const scrape = async () => (await fetch(`${platform.metricsUrls.management}/metrics`)).text();
  const cash = async (id: string) => (await api('GET', `/portfolios/${id}`)).body.portfolio.$EUR as number | undefined;
  const depositBody = (portfolio: string, externalId: string) => ({ data: { amount: '10.25', currency: 'EUR', portfolio, external_id: externalId } });

  /** The round trips of one POST /events/deposit/ (its status checked), from the metric before and after it, and its answer. */
  async function sent(body: unknown, key: string, status = 201) {
    const before = counted(await scrape(), 'createDeposit');
    const res = await api('POST', '/events/deposit/', body, { 'Idempotency-Key': key });
    assert.equal(res.status, status, res.text);
    const after = counted(await scrape(), 'createDeposit');
    assert.equal(after.count - before.count, 1, 'one request counted');
    return { trips: after.sum - before.sum, res };
  }
  const tripsOf = async (body: unknown, key: string) => (await sent(body, key)).trips;

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
    // The tenant's first transaction reads its settings first: these writes make the ones measured the usual kind.
    owner = (await api('POST', '/users/', build.user())).body.id;
  });
  after(() => platform?.stop());

  it('books a deposit with a new Idempotency-Key in at most 3 round trips (8 before), and replays it in at most 3', async () => {
    const id = (await api('POST', '/portfolios/', build.portfolio(owner))).body.id as string;
    const body = depositBody(id, 'rt-1');
    const trips = await tripsOf(body, 'rt-key-1');
    // Claim with the tenant scope; the portfolio's lock with its owner; the writes, events and kept answer with the COMMIT.
    assert.ok(trips <= 3, `a deposit with a new key took ${trips} round trips`);
    assert.equal(await cash(id), 10.25, 'booked');
    const replayTrips = await tripsOf(body, 'rt-key-1');
    assert.ok(replayTrips <= 3, `a replay took ${replayTrips} round trips`);
    assert.equal(await cash(id), 10.25, 'booked once');
  });

  it('books a deposit into a robo-advised portfolio that asks for an optimization in at most 9 round trips', async () => {
    const policy = (await api('POST', '/policies/', build.policy({ config: { minimum_funding_amount: '1.00', model_portfolio: { IE00B4L5Y983: 0.9 } } }))).body
      .id as string;
    const id = (await api('POST', '/portfolios/', build.roboPortfolio(owner, { policy_id: policy }))).body.id as string;
    const trips = await tripsOf(depositBody(id, 'rt-robo'), 'rt-key-robo');
    // Besides the 3: the policy's minimum, then the optimization's request (lock, policy, open optimizations, two inserts).
    assert.ok(trips <= 9, `a robo-advised deposit took ${trips} round trips`);
    assert.equal(await cash(id), 10.25);
    const optimizations = await platform.database.db('entities').where({ type: 'optimizations', parent_id: id });
    assert.equal(optimizations.length, 1, 'one optimization requested');
  });

  it('refuses a taken external_id, found at the COMMIT, with the 409 pointing into the event, and nothing of the deposit stays', async () => {
    const id = (await api('POST', '/portfolios/', build.portfolio(owner))).body.id as string;
    assert.ok((await tripsOf(depositBody(id, 'rt-taken'), 'rt-key-2')) <= 3);
    const { trips, res } = await sent(depositBody(id, 'rt-taken'), 'rt-key-3', 409);
    assert.ok(trips <= 4, `the refusal took ${trips} round trips`);
    assertProblem(res, 409, 'duplicate_value');
    assert.deepEqual(res.body.errors[0].loc, ['body', 'data', 'external_id']);
    assert.equal(res.body.detail, 'external_id is already used by another entity of this tenant.', 'no SQL in the answer');
    assert.equal(await cash(id), 10.25, 'the refused deposit added nothing');
    assert.equal((await api('GET', `/portfolios/${id}/transactions/?limit=10`)).body.count, 1, 'no second transaction');
    assert.equal((await platform.database.db('idempotency_keys').where({ key: 'rt-key-3' })).length, 0, 'the refused key is not kept');
  });
});
