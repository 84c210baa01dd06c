import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import type { Api } from '@platform/test-support/fixtures';
import { ORDERS, answeredOptimization, eventually, UNKNOWN_O, startOptimizationWorlds, type OptimizationWorlds } from './stand-in.ts';

/**
 * The operator's request and the reads of optimizations (contracts/management.openapi.yaml) over HTTP
 * (docs/adr/0021-optimizations.md); the owner's choice is choice.test.ts.
 */
describe('optimization operations', function () {
  this.timeout(120_000);
  // Set once the worlds have started (before); the cast only gives them their types.
  let { platform, optimizer, world, stranger, asOwner, asOther, stop } = {} as OptimizationWorlds;

  before(async () => {
    ({ platform, optimizer, world, stranger, asOwner, asOther, stop } = await startOptimizationWorlds());
  });
  after(async () => stop?.());

  const answered = (portfolio: string, over: Record<string, unknown> = {}) => answeredOptimization(world, optimizer, portfolio, over);

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
      const before = await world.untouched(other);
      assertProblem(await world.api('POST', `/portfolios/${other}/optimizations/`, { external_id: 'ops-rebalance-1' }), 409, 'duplicate_value');
      assert.deepEqual(await world.untouched(other), before);
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
      const before = await world.untouched(portfolio);
      assertProblem(await asOwner('POST', `/portfolios/${portfolio}/optimizations/`, {}), 403, 'forbidden');
      for (const id of ['P01HZC48CNR9YNY5M4C8F5S2HT9', 'X01HZC48CNR9YNY5M4C8F5S2HT9', deleted, elsewhere]) {
        assertProblem(await world.api('POST', `/portfolios/${id}/optimizations/`, {}), 404, 'not_found');
      }
      assert.deepEqual(await world.untouched(portfolio), before);
      assert.equal((await world.optimizationsOf(deleted)).length, 0);
    });

    it('refuses when the gate is closed, saying why, and writes nothing (no entity, no request, no outbox row)', async () => {
      const deletedPolicy = await world.created('/policies/', { name: 'Gone', config: { model_portfolio: {} } });
      const orphan = await world.portfolio({ policy_id: deletedPolicy });
      assert.equal((await world.api('DELETE', `/policies/${deletedPolicy}`)).status, 200);
      const pending = await world.portfolio();
      await world.request(pending);
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
        const before = await world.untouched(portfolio);
        const res = await world.api('POST', `/portfolios/${portfolio}/optimizations/`, { external_id: `refused-${portfolio}` });
        assertProblem(res, 409, 'state_conflict');
        assert.match(res.body.detail, why);
        assert.deepEqual(await world.untouched(portfolio), before, `${why}: nothing written`);
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
      const second = await world.request(portfolio);
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
});
