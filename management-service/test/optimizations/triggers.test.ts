import assert from 'node:assert/strict';
import knex, { type Knex } from 'knex';
import { createLogger, newId } from '@platform/shared';
import type { TestPlatform } from '@platform/test-support/platform';
import { runNightlyIfDue } from '../../src/jobs/optimizer-nightly.ts';
import { optimizationTenant, startOptimizationPlatform, type OptimizationTenant, type OptimizerStandIn } from './stand-in.ts';

/** What asks the optimizer (docs/adr/0021-optimizations.md): changes of portfolios and policies, and the nightly batch. */
describe('optimization triggers', function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let optimizer: OptimizerStandIn;
  let world: OptimizationTenant;
  const logger = createLogger('test', 'error');

  before(async () => {
    ({ platform, optimizer } = await startOptimizationPlatform());
    world = await optimizationTenant(platform);
  });
  after(async () => {
    await optimizer?.stop();
    await platform?.stop();
  });

  const reasons = async (portfolio: string) => (await world.requestsOf(portfolio)).map((r) => r.reason);
  const patch = async (path: string, body: unknown) => {
    const res = await world.api('PATCH', path, body);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  /** Answers the portfolio's pending request, so that its gate opens again. */
  const finish = async (portfolio: string) => {
    const request = await optimizer.take((r) => r.portfolio_id === portfolio);
    await optimizer.answer(request, { status: 'NOT_OPTIMIZED', is_recommended: false, orders: {}, detail: 'no drift' });
    for (let i = 0; i < 300; i++) {
      const rows = await world.optimizationsOf(portfolio);
      if (rows.every((o: { doc: { status: string } }) => o.doc.status !== 'PENDING')) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the optimization did not finish');
  };

  it('a client changing the holdings asks for an optimization (HOLDINGS); other changes, and a PENDING one, ask for none', async () => {
    const portfolio = await world.portfolio();
    await patch(`/portfolios/${portfolio}`, { name: 'Renamed', config: { manager_settings: { tags: ['x'] } } });
    assert.deepEqual(await reasons(portfolio), []);
    await patch(`/portfolios/${portfolio}`, { portfolio: { $EUR: 900, IE00B4L5Y983: 1 } });
    assert.deepEqual(await reasons(portfolio), ['HOLDINGS']);
    const [request] = await world.requestsOf(portfolio);
    assert.deepEqual(request!.holdings, { $EUR: 900, IE00B4L5Y983: 1 });
    // Skipped silently while one is PENDING: the PATCH itself succeeds.
    await patch(`/portfolios/${portfolio}`, { portfolio: { $EUR: 800, IE00B4L5Y983: 2 } });
    assert.deepEqual(await reasons(portfolio), ['HOLDINGS']);
    assert.equal((await world.optimizationsOf(portfolio)).length, 1);
    // Holdings of a self-managed portfolio ask for nothing.
    const own = await world.created('/portfolios/', {
      name: 'Self',
      owned_by_user_id: world.owner,
      base_currency: 'EUR',
      money_type: 'REAL_MONEY',
      config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
    });
    await patch(`/portfolios/${own}`, { portfolio: { $EUR: 5 } });
    assert.deepEqual(await reasons(own), []);
    assert.equal((await world.optimizationsOf(own)).length, 0);
  });

  it('a deposit asks with reason DEPOSIT and a divest_amount change with DIVEST_AMOUNT, not HOLDINGS', async () => {
    const portfolio = await world.portfolio();
    const deposit = await world.api('POST', '/events/deposit/', { data: { amount: '10.00', currency: 'EUR', portfolio, external_id: `cb-${portfolio}` } });
    assert.equal(deposit.status, 201, deposit.text);
    assert.deepEqual(await reasons(portfolio), ['DEPOSIT']);
    await finish(portfolio);
    await patch(`/portfolios/${portfolio}`, { config: { manager_settings: { divest_amount: 100 } } });
    assert.deepEqual(await reasons(portfolio), ['DEPOSIT', 'DIVEST_AMOUNT']);
  });

  it("a change of a policy's config asks for every robo-advised portfolio that follows it, in its transaction, and for no other", async () => {
    const policy = await world.created('/policies/', { name: 'Shared', config: { model_portfolio: { IE00B4L5Y983: 0.5 } } });
    const other = await world.created('/policies/', { name: 'Other', config: { model_portfolio: { IE00B4L5Y983: 0.5 } } });
    const discretionary = await world.portfolio({ policy_id: policy });
    const advisory = await world.portfolio({ policy_id: policy }, {}, 'ROBO_ADVISOR_ADVISORY');
    const inactive = await world.portfolio({ policy_id: policy, active: false });
    const pending = await world.portfolio({ policy_id: policy });
    assert.equal((await world.api('POST', `/portfolios/${pending}/optimizations/`, {})).status, 202);
    const deleted = await world.portfolio({ policy_id: policy });
    assert.equal((await world.api('DELETE', `/portfolios/${deleted}`)).status, 200);
    const elsewhere = await world.portfolio({ policy_id: other });
    const stranger = await optimizationTenant(platform);
    const foreign = await stranger.portfolio();

    // A new name changes no portfolio's rules.
    await patch(`/policies/${policy}`, { name: 'Shared, renamed' });
    for (const p of [discretionary, advisory, inactive, deleted, elsewhere]) assert.deepEqual(await reasons(p), [], p);

    const { seq: lastSeq } = (await platform.database.db('outbox').max('seq as seq').first()) as { seq: string };
    await patch(`/policies/${policy}`, { config: { cash_buffer: 0.05 } });
    assert.deepEqual(await reasons(discretionary), ['POLICY']);
    assert.deepEqual(await reasons(advisory), ['POLICY']);
    assert.deepEqual(await reasons(pending), ['OPERATOR']);
    for (const p of [inactive, deleted, elsewhere]) assert.deepEqual(await reasons(p), [], p);
    assert.deepEqual(await stranger.requestsOf(foreign), []);
    const [request] = await world.requestsOf(discretionary);
    assert.equal(request!.cash_buffer, 0.05);
    // Written by the PATCH's transaction: the policy's new version and both requests commit together.
    const written = await platform.database
      .db('outbox')
      .where('seq', '>', lastSeq)
      .whereNotNull('nats_subject')
      .select(platform.database.db.raw('count(distinct xid) as transactions, count(*) as requests'))
      .first();
    assert.deepEqual([Number(written.transactions), Number(written.requests)], [1, 2]);
  });

  it("passes a policy's fx_cost_bps to the optimizer, absent when the policy has none; refuses 10,000 bps or more and changes nothing", async () => {
    const policy = await world.created('/policies/', { name: 'Dollars', config: { model_portfolio: { US0378331005: 0.5 } } });
    const portfolio = await world.portfolio({ policy_id: policy });
    await patch(`/policies/${policy}`, { config: { cash_buffer: 0.01 } });
    const [before] = await world.requestsOf(portfolio);
    assert.equal(Object.hasOwn(before!, 'fx_cost_bps'), false);
    await finish(portfolio);

    const refused = await world.api('PATCH', `/policies/${policy}`, { config: { fx_cost_bps: 10_000 } });
    assert.deepEqual(
      [refused.status, refused.body.code, refused.body.errors[0].loc],
      [422, 'validation_failed', ['body', 'config', 'fx_cost_bps']],
      refused.text,
    );
    const unchanged = await world.api('GET', `/policies/${policy}`);
    assert.deepEqual([unchanged.body.version, unchanged.body.config.fx_cost_bps], [2, undefined]);
    assert.equal((await world.requestsOf(portfolio)).length, 1);

    const changed = await patch(`/policies/${policy}`, { config: { fx_cost_bps: 35 } });
    assert.equal(changed.config.fx_cost_bps, 35);
    const requests = await world.requestsOf(portfolio);
    assert.deepEqual([requests.length, requests.at(-1)!.reason, requests.at(-1)!.fx_cost_bps], [2, 'POLICY', 35]);
  });

  describe('nightly batch', () => {
    const replicas: Knex[] = [];
    const replica = () => {
      const db = knex({ client: 'pg', connection: platform.database.url, pool: { min: 0, max: 4 } });
      replicas.push(db);
      return db;
    };
    after(() => Promise.all(replicas.map((db) => db.destroy())));

    it('runs once across two job instances started together, for the ACTIVE robo-advised portfolios whose gate is open', async () => {
      const tenant = await optimizationTenant(platform);
      const active = await tenant.portfolio({}, { money_type: 'PAPER_MONEY' });
      const advisory = await tenant.portfolio({}, { money_type: 'PAPER_MONEY' }, 'ROBO_ADVISOR_ADVISORY');
      const unfunded = await tenant.portfolio(); // REAL_MONEY without funded_since: WAITING_FOR_FUNDS
      const cooling = await tenant.portfolio({ optimization_cooldown_end: '2099-01-01T00:00:00.000Z' }, { money_type: 'PAPER_MONEY' });
      const pending = await tenant.portfolio({}, { money_type: 'PAPER_MONEY' });
      assert.equal((await tenant.api('POST', `/portfolios/${pending}/optimizations/`, {})).status, 202);
      const options = { logger, at: '00:00' };
      const [a, b] = await Promise.all([runNightlyIfDue({ ...options, db: replica() }), runNightlyIfDue({ ...options, db: replica() })]);
      const runs = [a, b].filter((r) => r !== undefined);
      assert.equal(runs.length, 1, 'exactly one instance ran the batch');
      assert.equal(runs[0]!.day, new Date().toISOString().slice(0, 10));
      assert.deepEqual(await tenant.requestsOf(active).then((r) => r.map((x) => x.reason)), ['SCHEDULED']);
      assert.deepEqual(await tenant.requestsOf(advisory).then((r) => r.map((x) => x.reason)), ['SCHEDULED']);
      for (const p of [unfunded, cooling]) assert.deepEqual(await tenant.requestsOf(p), [], p);
      assert.deepEqual(await tenant.requestsOf(pending).then((r) => r.map((x) => x.reason)), ['OPERATOR']);
      const rows = await platform.database.db('optimizer_nightly_runs').select('*');
      assert.equal(rows.length, 1);
      assert.equal(rows[0].requested, runs[0]!.requested);
      // A restart (a later check the same day) finds the day done.
      assert.equal(await runNightlyIfDue({ ...options, db: replica() }), undefined);
      assert.equal((await tenant.requestsOf(active)).length, 1);
      // Not due before its time.
      assert.equal(await runNightlyIfDue({ ...options, at: '23:59', now: () => new Date(`${runs[0]!.day}T12:00:00.000Z`), db: replica() }), undefined);
    });

    it('requests 10,000 portfolios in seconds (batches of requests)', async () => {
      const tenant = await optimizationTenant(platform);
      const db = platform.database.db;
      const template = (await db('entities')
        .where({ id: await tenant.portfolio({}, { money_type: 'PAPER_MONEY' }) })
        .first()) as Record<string, unknown>;
      const N = 10_000;
      const at = new Date();
      const rows = Array.from({ length: N - 1 }, () => ({
        tenant_id: tenant.tenant.tenantId,
        id: newId('P'),
        type: 'portfolios',
        parent_id: null,
        version: 1,
        doc: template.doc,
        readable_by: template.readable_by,
        modifiable_by: template.modifiable_by,
        created_at: at,
        version_at: at,
      }));
      for (let i = 0; i < rows.length; i += 1000) {
        const chunk = rows.slice(i, i + 1000);
        await db('entities').insert(chunk);
        await db('entity_versions').insert(chunk.map((r) => ({ tenant_id: r.tenant_id, id: r.id, version: 1, doc: r.doc, deleted: false, version_at: at })));
      }
      await db('optimizer_nightly_runs').delete();
      const started = Date.now();
      const run = await runNightlyIfDue({ logger, at: '00:00', db: replica() });
      const ms = Date.now() - started;
      assert.ok(run);
      const mine = await db('optimization_requests').where({ tenant_id: tenant.tenant.tenantId, reason: 'SCHEDULED' }).count('* as n').first();
      assert.equal(Number(mine!.n), N);
      assert.ok(ms < 60_000, `${N} portfolios took ${ms} ms`);
      console.log(`      nightly batch: ${N} portfolios of one tenant requested in ${ms} ms (${run.requested} requests in all)`);
    });
  });
});
