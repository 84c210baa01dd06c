import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { userApi, type Api } from '@platform/test-support/fixtures';
import type { TestPlatform } from '@platform/test-support/platform';
import { ORDERS, eventually, optimizationTenant, startOptimizationPlatform, type OptimizationTenant, type OptimizerStandIn } from './stand-in.ts';

const ADVISORY = 'ROBO_ADVISOR_ADVISORY';
const UNKNOWN_O = 'O01HZ1AGR63S781D0FSA833PT5T';

/**
 * The five optimization operations of contracts/management.openapi.yaml over HTTP (docs/adr/0021-optimizations.md).
 * The settlement job is off, so an optimization handed to execution stays waiting for it.
 */
describe('optimization operations', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let optimizer: OptimizerStandIn;
  let world: OptimizationTenant;
  let stranger: OptimizationTenant;
  let asOwner: Api;
  let asOther: Api;

  before(async () => {
    ({ platform, optimizer } = await startOptimizationPlatform({ BROKER_SETTLEMENT: 'false' }));
    world = await optimizationTenant(platform);
    stranger = await optimizationTenant(platform);
    asOwner = await userApi(platform, world.api, world.owner);
    asOther = await userApi(platform, world.api, await world.created('/users/', { first_name: 'Eve' }));
  });
  after(async () => {
    await optimizer?.stop();
    await platform?.stop();
  });

  const requestOf = async (portfolio: string, body: unknown = {}, headers: Record<string, string> = {}) => {
    const res = await world.api('POST', `/portfolios/${portfolio}/optimizations/`, body, headers);
    assert.equal(res.status, 202, res.text);
    return res.body.id as string;
  };
  /** An optimization of the portfolio that the stand-in answered (a recommended SUCCESS unless `over` says otherwise). */
  const answered = async (portfolio: string, over: Record<string, unknown> = {}) => {
    const id = await requestOf(portfolio);
    await optimizer.answer(await optimizer.take((r) => r.optimization_id === id), over);
    return eventually(
      () => world.optimization(id),
      (o) => o.status !== 'PENDING',
    );
  };
  /** Everything a refusal must leave alone: the portfolio's optimizations and the tenant's outbox. */
  const snapshot = async (portfolio: string) => ({
    optimizations: await world.optimizationsOf(portfolio),
    outbox: (await platform.database.db('outbox').count('* as n').where({ tenant_id: world.tenant.tenantId }))[0]!.n,
    requests: (await platform.database.db('optimization_requests').count('* as n').where({ tenant_id: world.tenant.tenantId }))[0]!.n,
  });

  /** A portfolio body without a manager (the world's builder makes robo-advised ones). */
  const basePortfolio = () => ({ name: 'Self', owned_by_user_id: world.owner, base_currency: 'EUR', money_type: 'REAL_MONEY' });

  describe('POST /portfolios/{id}/optimizations/ (operators)', () => {
    it('answers 202 with the PENDING optimization and its Location, writes its request, and keeps the external_id', async () => {
      const portfolio = await world.portfolio();
      const res = await world.api('POST', `/portfolios/${portfolio}/optimizations/`, { external_id: 'ops-rebalance-1' });
      assert.equal(res.status, 202, res.text);
      assert.match(res.body.id, /^O[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.equal(res.headers.get('location'), `/optimizations/${res.body.id}`);
      assert.deepEqual(
        { ...res.body, id: undefined, creation_datetime: undefined, version_datetime: undefined },
        {
          id: undefined,
          creation_datetime: undefined,
          version_datetime: undefined,
          external_id: 'ops-rebalance-1',
          portfolio_id: portfolio,
          is_recommended: false,
          status: 'PENDING',
          owner_choice: null,
          orders: {},
          status_detail: null,
          execution_status: null,
          execution_detail: null,
          version: 1,
          version_authored_by_user_id: null,
          deleted: false,
          readable_by: [world.owner],
          modifiable_by: [world.owner],
          _embedded: {},
        },
      );
      const request = await optimizer.take((r) => r.optimization_id === res.body.id);
      assert.deepEqual([request.reason, request.portfolio_id, request.tenant_id], ['OPERATOR', portfolio, world.tenant.tenantId]);
      const [row] = await platform.database.db('optimization_requests').where({ optimization_id: res.body.id });
      assert.deepEqual([row.request_id, row.attempt, row.reason, row.result_at], [request.request_id, 1, 'OPERATOR', null]);
      assert.match(row.inputs_digest, /^[0-9a-f]{64}$/);
      assert.deepEqual((await world.api('GET', res.headers.get('location')!)).body.id, res.body.id);
      // An external_id is unique per tenant among optimizations.
      const other = await world.portfolio();
      const before = await snapshot(other);
      assertProblem(await world.api('POST', `/portfolios/${other}/optimizations/`, { external_id: 'ops-rebalance-1' }), 409, 'duplicate_value');
      assert.deepEqual(await snapshot(other), before);
    });

    it('replays an Idempotency-Key: the same 202 with Idempotency-Replayed, no second optimization', async () => {
      const portfolio = await world.portfolio();
      const first = await world.api('POST', `/portfolios/${portfolio}/optimizations/`, {}, { 'Idempotency-Key': `ops-${portfolio}` });
      assert.equal(first.status, 202, first.text);
      const again = await world.api('POST', `/portfolios/${portfolio}/optimizations/`, {}, { 'Idempotency-Key': `ops-${portfolio}` });
      assert.equal(again.status, 202, again.text);
      assert.equal(again.headers.get('idempotency-replayed'), 'true');
      assert.equal(again.text, first.text);
      assert.equal((await world.optimizationsOf(portfolio)).length, 1);
      assert.equal((await world.requestsOf(portfolio)).length, 1);
    });

    it('is for machine clients: the owner gets 403; an unknown, deleted or other tenant portfolio 404; nothing is written', async () => {
      const portfolio = await world.portfolio();
      const deleted = await world.portfolio();
      assert.equal((await world.api('DELETE', `/portfolios/${deleted}`)).status, 200);
      const elsewhere = await stranger.portfolio();
      const before = await snapshot(portfolio);
      assertProblem(await asOwner('POST', `/portfolios/${portfolio}/optimizations/`, {}), 403, 'forbidden');
      for (const id of ['P01HZC48CNR9YNY5M4C8F5S2HT9', 'X01HZC48CNR9YNY5M4C8F5S2HT9', deleted, elsewhere]) {
        assertProblem(await world.api('POST', `/portfolios/${id}/optimizations/`, {}), 404, 'not_found');
      }
      assert.deepEqual(await snapshot(portfolio), before);
      assert.equal((await world.optimizationsOf(deleted)).length, 0);
    });

    it('refuses when the gate is closed, saying why, and writes nothing (no entity, no request, no outbox row)', async () => {
      const deletedPolicy = await world.created('/policies/', { name: 'Gone', config: { model_portfolio: {} } });
      const orphan = await world.portfolio({ policy_id: deletedPolicy });
      assert.equal((await world.api('DELETE', `/policies/${deletedPolicy}`)).status, 200);
      const pending = await world.portfolio();
      await requestOf(pending);
      const executing = await world.portfolio({}, { money_type: 'PAPER_MONEY' });
      assert.equal((await answered(executing)).execution_status, 'PENDING');
      const archivedPortfolio = async () => {
        const id = await world.portfolio();
        assert.equal((await world.api('PATCH', `/portfolios/${id}`, { archived: true })).status, 200);
        return id;
      };
      const cases: [string, RegExp][] = [
        [
          await world.created('/portfolios/', { ...basePortfolio(), config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} } }),
          /not robo-advised .*USER_MANAGED/,
        ],
        [await archivedPortfolio(), /archived/],
        [await world.portfolio({ active: false }), /inactive/],
        [await world.portfolio({ policy_id: null }), /no policy/],
        [orphan, /policy .* is deleted/],
        [await world.portfolio({ optimization_cooldown_end: '2099-01-01T00:00:00.000Z' }), /cool-down: no optimization before 2099-01-01/],
        [pending, /still being computed/],
        [executing, /waiting for execution/],
      ];
      for (const [portfolio, why] of cases) {
        const before = await snapshot(portfolio);
        const res = await world.api('POST', `/portfolios/${portfolio}/optimizations/`, { external_id: `refused-${portfolio}` });
        assertProblem(res, 409, 'state_conflict');
        assert.match(res.body.detail, why);
        assert.deepEqual(await snapshot(portfolio), before, `${why}: nothing written`);
      }
    });
  });

  describe('GET /optimizations/{id} and /portfolios/{id}/optimizations/latest/', () => {
    it('reads an optimization for the machine client and the owner; another customer 403; another tenant, wrong letter or unknown 404', async () => {
      const portfolio = await world.portfolio();
      const done = await answered(portfolio);
      for (const api of [world.api, asOwner]) {
        const res = await api('GET', `/optimizations/${done.id}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, done);
      }
      assertProblem(await asOther('GET', `/optimizations/${done.id}`), 403, 'forbidden');
      for (const id of [UNKNOWN_O, `P${done.id.slice(1)}`]) assertProblem(await world.api('GET', `/optimizations/${id}`), 404, 'not_found');
      assertProblem(await stranger.api('GET', `/optimizations/${done.id}`), 404, 'not_found');
    });

    it('answers the newest: 404 before any, 202 while PENDING, 200 once finished', async () => {
      const portfolio = await world.portfolio();
      assertProblem(await world.api('GET', `/portfolios/${portfolio}/optimizations/latest/`), 404, 'not_found');
      const first = await answered(portfolio, { status: 'INFEASIBLE', is_recommended: false, orders: {}, detail: 'bands' });
      let latest = await world.api('GET', `/portfolios/${portfolio}/optimizations/latest/`);
      assert.deepEqual([latest.status, latest.body.id, latest.body.status], [200, first.id, 'INFEASIBLE']);
      const second = await requestOf(portfolio);
      latest = await world.api('GET', `/portfolios/${portfolio}/optimizations/latest/`);
      assert.deepEqual([latest.status, latest.body.id, latest.body.status], [202, second, 'PENDING']);
      await optimizer.answer(await optimizer.take((r) => r.optimization_id === second));
      latest = await eventually(
        () => world.api('GET', `/portfolios/${portfolio}/optimizations/latest/`),
        (r) => r.status === 200,
      );
      assert.deepEqual([latest.body.id, latest.body.status, latest.body.orders], [second, 'SUCCESS', ORDERS]);
      assert.equal((await asOwner('GET', `/portfolios/${portfolio}/optimizations/latest/`)).status, 200);
      assertProblem(await asOther('GET', `/portfolios/${portfolio}/optimizations/latest/`), 403, 'forbidden');
      assertProblem(await stranger.api('GET', `/portfolios/${portfolio}/optimizations/latest/`), 404, 'not_found');
    });
  });

  describe('GET /portfolios/{id}/optimizations/', () => {
    it('lists newest first with paging, the query language, select and embed, for the machine client and the owner', async () => {
      const portfolio = await world.portfolio();
      const a = await answered(portfolio, { status: 'NOT_OPTIMIZED', is_recommended: false, orders: {}, detail: 'no drift' });
      const b = await answered(portfolio);
      const c = await answered(portfolio, { status: 'INFEASIBLE', is_recommended: false, orders: {}, detail: 'bands' });
      const list = async (api: Api, query = '') => {
        const res = await api('GET', `/portfolios/${portfolio}/optimizations/${query}`);
        assert.equal(res.status, 200, res.text);
        return res.body;
      };
      const all = await list(world.api);
      assert.deepEqual(
        all.results.map((o: { id: string }) => o.id),
        [c.id, b.id, a.id],
      );
      assert.deepEqual([all.count, all.offset, all.next], [3, 0, null]);
      assert.deepEqual(all.results[1], b);
      const page = await list(world.api, '?limit=2');
      assert.deepEqual(
        page.results.map((o: { id: string }) => o.id),
        [c.id, b.id],
      );
      assert.equal(page.count, 3);
      assert.equal(page.next, `/portfolios/${portfolio}/optimizations/?limit=2&offset=2`);
      assert.deepEqual(
        (await list(world.api, '?limit=2&offset=2')).results.map((o: { id: string }) => o.id),
        [a.id],
      );
      const q = (text: string) => `?query=${encodeURIComponent(text)}`;
      assert.deepEqual(
        (await list(world.api, q("status eq 'SUCCESS'"))).results.map((o: { id: string }) => o.id),
        [b.id],
      );
      assert.deepEqual(
        (await list(world.api, q("status in ['SUCCESS', 'INFEASIBLE'] orderby creation_datetime asc"))).results.map((o: { id: string }) => o.id),
        [b.id, c.id],
      );
      assert.deepEqual(
        (await list(world.api, q("is_recommended eq true or status_detail eq 'no*'"))).results.map((o: { id: string }) => o.id),
        [b.id, a.id],
      );
      assert.deepEqual((await list(world.api, q("status eq 'SUCCESS' select status, orders"))).results, [{ id: b.id, status: 'SUCCESS', orders: ORDERS }]);
      const embedded = await list(world.api, `?embed=portfolio_id&limit=1`);
      assert.deepEqual(Object.keys(embedded._embedded), [portfolio]);
      const bad = await world.api('GET', `/portfolios/${portfolio}/optimizations/${q('status eq')}`);
      assertProblem(bad, 400, 'invalid_query');
      assertProblem(await world.api('GET', `/portfolios/${portfolio}/optimizations/${q("colour eq 'red'")}`), 400, 'invalid_query');
      assert.deepEqual(
        (await list(asOwner)).results.map((o: { id: string }) => o.id),
        [c.id, b.id, a.id],
      );
      assertProblem(await asOther('GET', `/portfolios/${portfolio}/optimizations/`), 403, 'forbidden');
      assertProblem(await stranger.api('GET', `/portfolios/${portfolio}/optimizations/`), 404, 'not_found');
    });
  });

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
      const next = await requestOf(portfolio);
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
      const pending = await requestOf(advisory);
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
        const outbox = await snapshot(before.portfolio_id);
        const res = await choose(world.api, id, choice);
        assertProblem(res, 409, 'state_conflict');
        assert.match(res.body.detail, why);
        assert.deepEqual(await world.optimization(id), before);
        assert.deepEqual(await snapshot(before.portfolio_id), outbox);
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
