import assert from 'node:assert/strict';
import fc from 'fast-check';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { compileQuery } from '../../src/query/compile.ts';
import { parseQuery } from '../../src/query/parser.ts';
import { countAndPage, countOf, pageOf } from '../../src/store/collections.ts';
import { inTenant } from '../../src/store/tenant-scope.ts';

describe('collections', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let api: Api;
  let tenantId: string;
  let ann: string;
  let bob: string;
  let policy: string;
  const portfolios: string[] = [];

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    tenantId = tenant.tenantId;
    api = await machineApi(platform, tenant);
    ann = (await api('POST', '/users/', build.user({ last_name: 'Ann' }))).body.id;
    bob = (await api('POST', '/users/', build.user({ last_name: 'Bob' }))).body.id;
    policy = (await api('POST', '/policies/', build.policy())).body.id;
    portfolios.push((await api('POST', '/portfolios/', build.roboPortfolio(ann, { policy_id: policy }))).body.id);
    portfolios.push((await api('POST', '/portfolios/', build.portfolio(bob))).body.id);
  });
  after(() => platform.stop());

  it('pages 45 entities without repeating or skipping one, with ties broken by id', async () => {
    for (let i = 0; i < 45; i++) await api('POST', '/goals/', { name: `goal ${i % 4}` });
    const seen: string[] = [];
    let next: string | null = `/goals/?limit=10&query=${encodeURIComponent('orderby name desc')}`;
    let pages = 0;
    while (next) {
      const page = await api('GET', next);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.body.count, 45);
      seen.push(...page.body.results.map((g: { id: string }) => g.id));
      next = page.body.next;
      pages++;
    }
    assert.equal(pages, 5);
    assert.equal(seen.length, 45);
    assert.equal(new Set(seen).size, 45);
    assert.equal((await api('GET', '/goals/?limit=10&offset=50')).body.results.length, 0);
  });

  it('defaults to 20 items and refuses limits outside 1–100 and negative offsets (400)', async () => {
    const page = await api('GET', '/goals/');
    assert.deepEqual([page.body.results.length, page.body.offset], [20, 0]);
    for (const params of ['limit=0', 'limit=101', 'offset=-1', 'limit=ten']) {
      const res = await api('GET', `/goals/?${params}`);
      assertProblem(res, 400, 'invalid_parameter');
      assert.equal(res.body.errors[0].loc[0], 'query');
    }
    assert.equal((await api('GET', '/goals/?limit=100')).body.results.length, 45);
  });

  it('embeds referenced entities by id, and refuses fields that are no reference', async () => {
    const res = await api(
      'GET',
      `/portfolios/?embed=owned_by_user_id,config.manager_settings.policy_id&query=${encodeURIComponent('orderby creation_datetime')}`,
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body._embedded).sort(), [ann, bob, policy].sort());
    assert.equal(res.body._embedded[ann].last_name, 'Ann');
    assert.equal(res.body._embedded[policy].name, 'Balanced');
    const single = await api('GET', `/portfolios/${portfolios[0]}?embed=owned_by_user_id`);
    assert.deepEqual(Object.keys(single.body._embedded), [ann]);
    const bad = await api('GET', '/portfolios/?embed=name');
    assertProblem(bad, 400, 'invalid_parameter');
    assert.match(bad.body.detail, /owned_by_user_id/);
  });

  it('lists nested transactions of one portfolio only, with the portfolio embedded', async () => {
    await api('POST', `/portfolios/${portfolios[0]}/transactions/`, build.transaction({ quantity: '10' }));
    await api('POST', `/portfolios/${portfolios[0]}/transactions/`, build.transaction({ quantity: '-2.5' }));
    await api('POST', `/portfolios/${portfolios[1]}/transactions/`, build.transaction());
    const res = await api('GET', `/portfolios/${portfolios[0]}/transactions/?embed=portfolio_id&query=${encodeURIComponent('quantity lt 0')}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.results.map((t: { quantity: string }) => t.quantity),
      ['-2.5'],
    );
    assert.deepEqual(Object.keys(res.body._embedded), [portfolios[0]]);
    assertProblem(await api('GET', '/portfolios/P01M80KHFCGRHVVWPCXR0XBGW3X/transactions/'), 404, 'not_found');
  });

  it('shows an end user only what they may read, in results and in _embedded', async () => {
    const asAnn = await userApi(platform, api, ann);
    const mine = await asAnn('GET', '/portfolios/?embed=owned_by_user_id');
    assert.deepEqual(
      mine.body.results.map((p: { id: string }) => p.id),
      [portfolios[0]],
    );
    assert.equal(mine.body.count, 1);
    const users = await asAnn('GET', '/users/');
    assert.deepEqual(
      users.body.results.map((u: { id: string }) => u.id),
      [ann],
    );
    const goals = await asAnn('GET', '/goals/');
    assert.equal(goals.body.count, 0);
  });

  it('keeps other tenants out of collections', async () => {
    const other = await machineApi(platform, await platform.tenant());
    assert.equal((await other('GET', '/portfolios/')).body.count, 0);
    assert.equal((await other('GET', `/portfolios/?query=${encodeURIComponent(`id eq '${portfolios[0]}'`)}`)).body.count, 0);
  });

  it('answers any query text with 200 or a 400 naming a position, never a 5xx', async () => {
    const alphabet = fc.constantFrom(
      ...`abnmeqltgio ()[],.'*\\-019$_;`.split(''),
      'name',
      'status',
      ' and ',
      ' or ',
      ' eq ',
      ' in ',
      ' to ',
      'orderby ',
      'select ',
      "'x'",
      'null',
      'deleted',
      'config.manager_settings.divest_amount',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(alphabet, { maxLength: 12 }).map((p) => p.join('')),
        async (text) => {
          const res = await api('GET', `/portfolios/?query=${encodeURIComponent(text)}`);
          assert.ok(
            res.status === 200 || (res.status === 400 && res.body.code === 'invalid_query' && typeof res.body.position === 'number'),
            `${res.status} for ${JSON.stringify(text)}: ${res.text}`,
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  describe('on a tenant of 3,000 portfolios', () => {
    const PENDING = 'config.manager_settings.divest_amount neq 0 and config.manager_settings.divest_amount neq null';
    const typeOf = (path: string[]) => (path.join('.') === 'config.manager_settings.divest_amount' ? 'number' : 'string') as 'number' | 'string';
    const byId = { sql: 'e.id asc', bindings: [] };
    const filter = (text: string) => ({ tenantId, type: 'portfolios', includeDeleted: false, where: compileQuery(parseQuery(text), typeOf).where });

    // Each portfolio with its own external_id, owner and profile; an amount to divest of 0 or none on most, 100 on one
    // in a hundred (one of them deleted) and '12.5' (a numeric string) on one in three hundred, so 39 are pending. With
    // the statistics of a tenant of some size: on a handful of rows any index costs the same and the plan is a coin toss.
    before(async () => {
      await platform.database.db.raw(
        `insert into entities (tenant_id, id, type, version, doc, deleted, created_at, version_at)
         select ?, 'P' || lpad(i::text, 26, '0'), 'portfolios', 1,
                jsonb_build_object('external_id', 'bulk-' || i, 'owned_by_user_id', 'U' || lpad(i::text, 26, '0'),
                  'config', jsonb_build_object('manager_settings', jsonb_strip_nulls(jsonb_build_object(
                    'suitability_profile_id', 'N' || lpad(i::text, 26, '0'),
                    'divest_amount', case when i % 100 = 0 then to_jsonb(100) when i % 300 = 150 then to_jsonb('12.5'::text)
                                          when i % 10 <> 1 then to_jsonb(0) end)))),
                i = 1500, now(), now()
           from generate_series(1, 3000) i`,
        [tenantId],
      );
      await platform.database.db.raw('analyze entities');
    });

    it('serves the useful queries of the interface from indexes', async () => {
      const queries = {
        "external_id eq 'x'": 'entities_external_id',
        [PENDING]: 'entities_portfolio_divest_pending',
        "config.manager_settings.suitability_profile_id eq 'N1'": 'entities_portfolio_profile',
        "owned_by_user_id eq 'U1'": 'entities_portfolio_owner',
      };
      for (const [text, index] of Object.entries(queries)) {
        const { where } = compileQuery(parseQuery(text), typeOf);
        const plan = await inTenant(platform.database.db, tenantId, async (trx) => {
          await trx.raw('set local enable_seqscan = off');
          const { rows } = await trx.raw(
            `explain select e.id from entities e where e.tenant_id = ? and e.type = 'portfolios' and not e.deleted and ${where.sql}`,
            [tenantId, ...(where.bindings as never[])],
          );
          return rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
        });
        assert.match(plan, new RegExp(index), `${text}:\n${plan}`);
      }
    });

    it('reads pending withdrawals, count and page, from the index of non-zero amounts alone, under row-level security', async () => {
      type Node = { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; 'Actual Rows': number; Filter?: string; Plans?: Node[] };
      const nodes = (node: Node): Node[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
      const { plan, page } = await inTenant(platform.database.db, tenantId, async (trx) => {
        await trx.raw('set local enable_seqscan = off');
        // The statements the collection read sends for a full first page, as it sends them (bound parameters).
        const nodesOf = async (statement: { sql: string; bindings: readonly unknown[] }) => {
          const { rows } = await trx.raw(`explain (analyze, format json) ${statement.sql}`, statement.bindings as never[]);
          return nodes((rows[0]['QUERY PLAN'] as { Plan: Node }[])[0]!.Plan);
        };
        const statements = [pageOf(trx, filter(PENDING), byId, { limit: 21, offset: 0 }).toSQL(), countOf(trx, filter(PENDING)).toSQL()];
        const plan = (await Promise.all(statements.map(nodesOf))).flat();
        return { plan, page: await countAndPage(trx, filter(PENDING), byId, { limit: 20, offset: 0 }) };
      });
      const reads = plan.filter((n) => n['Relation Name'] === 'entities' || n['Index Name'] !== undefined);
      const described = JSON.stringify(plan, null, 1);
      // The count and the page each read the partial index, which holds the 40 non-zero amounts (the deleted one is
      // filtered afterwards): no portfolio without a pending amount is read, and no condition on the amount is left
      // to check row by row.
      assert.ok(reads.length >= 2, described);
      for (const node of reads) {
        assert.doesNotMatch(node.Filter ?? '', /platform_numeric/, described);
        if (node['Node Type'] === 'Bitmap Heap Scan') continue; // its Bitmap Index Scan is one of the reads
        assert.equal(node['Index Name'], 'entities_portfolio_divest_pending', described);
        assert.ok(node['Actual Rows'] <= 40, described);
      }
      assert.equal(page.total, 39);
      assert.equal(page.rows.length, 20);
      for (const row of page.rows) assert.ok(Number((row.doc.config as { manager_settings: { divest_amount: unknown } }).manager_settings.divest_amount) > 0);
    });

    it('counts in a second statement only a full page or an empty one past the end: a page that is not full ends the matches', async () => {
      const statements: string[] = [];
      const listen = (query: { sql: string }) => statements.push(query.sql);
      const read = (text: string, offset: number) =>
        inTenant(platform.database.db, tenantId, async (trx) => {
          statements.length = 0;
          trx.on('query', listen);
          const page = await countAndPage(trx, filter(text), byId, { limit: 20, offset });
          trx.off('query', listen);
          return { total: page.total, ids: page.rows.map((r) => r.id), statements: statements.length };
        });
      const first = await read(PENDING, 0);
      const second = await read(PENDING, 20);
      assert.deepEqual([first.total, first.ids.length, first.statements], [39, 20, 2]);
      assert.deepEqual([second.total, second.ids.length, second.statements], [39, 19, 1]);
      assert.equal(new Set([...first.ids, ...second.ids]).size, 39);
      assert.deepEqual(first.ids, [...first.ids].sort());
      // The last 20: as many as asked, and none after them.
      assert.deepEqual(await read(PENDING, 19), { total: 39, ids: [first.ids[19]!, ...second.ids], statements: 1 });
      assert.deepEqual(await read(PENDING, 39), { total: 39, ids: [], statements: 2 });
      assert.deepEqual(await read("external_id eq 'bulk-7'", 0), { total: 1, ids: ['P' + '7'.padStart(26, '0')], statements: 1 });
      assert.deepEqual(await read("external_id eq 'none'", 0), { total: 0, ids: [], statements: 1 });
      assert.deepEqual(await read("external_id eq 'none'", 40), { total: 0, ids: [], statements: 2 });
    });
  });
});
