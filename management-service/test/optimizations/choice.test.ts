import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import type { Api } from '@platform/test-support/fixtures';
import { answeredOptimization, UNKNOWN_O, startOptimizationWorlds, type OptimizationWorlds } from './stand-in.ts';

const ADVISORY = 'ROBO_ADVISOR_ADVISORY';

/**
 * The owner's choice on an advisory recommendation, PATCH /optimizations/{id} (flows/optimization/choice.ts,
 * docs/adr/0021-optimizations.md), over HTTP. The settlement job is off, so an optimization handed to execution stays
 * waiting for it.
 */
describe('optimization owner choice', function () {
  this.timeout(120_000);
  // Set once the worlds have started (before); the cast only gives them their types.
  let { platform, optimizer, world, stranger, asOwner, asOther, stop } = {} as OptimizationWorlds;

  before(async () => {
    ({ platform, optimizer, world, stranger, asOwner, asOther, stop } = await startOptimizationWorlds());
  });
  after(async () => stop?.());

  const answered = (portfolio: string, over: Record<string, unknown> = {}) => answeredOptimization(world, optimizer, portfolio, over);

  describe('PATCH /optimizations/{id} (owner choice)', () => {
    const choose = (api: Api, id: string, owner_choice: string, headers: Record<string, string> = {}) =>
      api('PATCH', `/optimizations/${id}`, { owner_choice }, headers);

    it('lets the owner ACCEPT an advisory recommendation: executed by the service for paper money, with its event', async () => {
      const portfolio = await world.portfolio({}, { money_type: 'PAPER_MONEY' }, ADVISORY);
      const done = await answered(portfolio);
      assert.deepEqual([done.execution_status, done.owner_choice], [null, null]);
      await world.events();
      const res = await choose(asOwner, done.id, 'ACCEPT', { 'If-Match': String(done.version) });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        [res.body.owner_choice, res.body.execution_status, res.body.version, res.body.version_authored_by_user_id],
        ['ACCEPT', 'PENDING', done.version + 1, world.owner],
      );
      assert.equal((await platform.database.db('broker_instructions').where({ optimization_id: done.id, kind: 'ORDERS' })).length, 1);
      assert.deepEqual(
        (await world.events()).map((e) => [`${e.subject}.${e.action}`, e.data]),
        [['optimizations.owner-choice-update', { id: done.id, portfolio_id: portfolio, external_id: null, value: 'ACCEPT' }]],
      );
      // Chosen once: a second choice is refused and changes nothing.
      const again = await choose(world.api, done.id, 'REJECT');
      assertProblem(again, 409, 'state_conflict');
      assert.match(again.body.detail, /already chose ACCEPT/);
      assert.equal((await world.optimization(done.id)).version, done.version + 1);
    });

    it('lets the machine client choose too; ACCEPT on a portfolio the Client Middleware executes hands nothing over; REJECT closes it', async () => {
      const portfolio = await world.portfolio({}, {}, ADVISORY);
      const accepted = await choose(world.api, (await answered(portfolio)).id, 'ACCEPT');
      assert.equal(accepted.status, 200, accepted.text);
      assert.deepEqual([accepted.body.owner_choice, accepted.body.execution_status, accepted.body.version_authored_by_user_id], ['ACCEPT', null, null]);
      const rejected = await choose(asOwner, (await answered(portfolio)).id, 'REJECT');
      assert.equal(rejected.status, 200, rejected.text);
      assert.deepEqual([rejected.body.owner_choice, rejected.body.execution_status], ['REJECT', null]);
      assert.equal((await platform.database.db('broker_instructions').where({ portfolio_id: portfolio })).length, 0);
    });

    it('REOPTIMIZE keeps the choice and requests a new optimization (reason REOPTIMIZE), with the choice event', async () => {
      const portfolio = await world.portfolio({}, {}, ADVISORY);
      const done = await answered(portfolio);
      await world.events();
      const res = await choose(asOwner, done.id, 'REOPTIMIZE');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.owner_choice, 'REOPTIMIZE');
      const request = await optimizer.take((r) => r.portfolio_id === portfolio);
      assert.equal(request.reason, 'REOPTIMIZE');
      assert.notEqual(request.optimization_id, done.id);
      const latest = await world.api('GET', `/portfolios/${portfolio}/optimizations/latest/`);
      assert.deepEqual([latest.status, latest.body.id], [202, request.optimization_id]);
      assert.equal((await world.optimization(done.id)).owner_choice, 'REOPTIMIZE');
      assert.deepEqual(
        (await world.events()).map((e) => [`${e.subject}.${e.action}`, e.data.value]),
        [['optimizations.owner-choice-update', 'REOPTIMIZE']],
      );
    });

    it('supersedes an advisory recommendation awaiting the choice: it becomes IGNORED with its event, and no choice can follow', async () => {
      const portfolio = await world.portfolio({}, {}, ADVISORY);
      const old = await answered(portfolio);
      await world.events();
      const next = await world.request(portfolio);
      const ignored = await world.optimization(old.id);
      assert.deepEqual([ignored.owner_choice, ignored.version, ignored.version_authored_by_user_id], ['IGNORED', old.version + 1, null]);
      assert.deepEqual(
        (await world.events()).map((e) => [`${e.subject}.${e.action}`, e.data]),
        [['optimizations.owner-choice-update', { id: old.id, portfolio_id: portfolio, external_id: null, value: 'IGNORED' }]],
      );
      const res = await choose(asOwner, old.id, 'ACCEPT');
      assertProblem(res, 409, 'state_conflict');
      assert.match(res.body.detail, /superseded/);
      assert.equal((await world.optimization(old.id)).version, old.version + 1);
      assert.equal((await world.optimization(next)).status, 'PENDING');
    });

    it('refuses with 409 saying why and changes nothing: not SUCCESS, not recommended, discretionary; REOPTIMIZE through a closed gate', async () => {
      const advisory = await world.portfolio({}, {}, ADVISORY);
      const infeasible = await answered(advisory, { status: 'INFEASIBLE', is_recommended: false, orders: {}, detail: 'bands' });
      const unrecommended = await answered(advisory, { is_recommended: false, orders: {} });
      const pending = await world.request(advisory);
      const discretionary = await answered(await world.portfolio());
      const cooling = await world.portfolio({}, {}, ADVISORY);
      const cooled = await answered(cooling);
      assert.equal(
        (await world.api('PATCH', `/portfolios/${cooling}`, { config: { manager_settings: { optimization_cooldown_end: '2099-01-01T00:00:00.000Z' } } }))
          .status,
        200,
      );
      const cases: [string, string, RegExp][] = [
        [infeasible.id, 'ACCEPT', /is INFEASIBLE/],
        [unrecommended.id, 'ACCEPT', /not recommended/],
        [pending, 'REJECT', /is PENDING/],
        [discretionary.id, 'ACCEPT', /ROBO_ADVISOR_DISCRETIONARY/],
        [cooled.id, 'REOPTIMIZE', /cool-down/],
      ];
      for (const [id, choice, why] of cases) {
        const before = await world.optimization(id);
        const outbox = await world.untouched(before.portfolio_id);
        const res = await choose(world.api, id, choice);
        assertProblem(res, 409, 'state_conflict');
        assert.match(res.body.detail, why);
        assert.deepEqual(await world.optimization(id), before);
        assert.deepEqual(await world.untouched(before.portfolio_id), outbox);
      }
    });

    it('checks If-Match (412), the caller (another customer 403, another tenant 404) and the body (IGNORED is the service’s: 422)', async () => {
      const portfolio = await world.portfolio({}, {}, ADVISORY);
      const done = await answered(portfolio);
      assertProblem(await choose(asOwner, done.id, 'ACCEPT', { 'If-Match': String(done.version - 1) }), 412, 'version_mismatch');
      assertProblem(await choose(asOther, done.id, 'ACCEPT'), 403, 'forbidden');
      assertProblem(await choose(stranger.api, done.id, 'ACCEPT'), 404, 'not_found');
      assertProblem(await choose(world.api, UNKNOWN_O, 'ACCEPT'), 404, 'not_found');
      assertProblem(await choose(world.api, done.id, 'IGNORED'), 422, 'validation_failed');
      assertProblem(await world.api('PATCH', `/optimizations/${done.id}`, { owner_choice: 'ACCEPT', status: 'FAILURE' }), 422, 'validation_failed');
      assert.deepEqual(await world.optimization(done.id), done);
      const ok = await choose(asOwner, done.id, 'REJECT', { 'If-Match': `"${done.version}"` });
      assert.equal(ok.status, 200, ok.text);
    });
  });
});
