import assert from 'node:assert/strict';
import type { components } from '@platform/api-types/data';
import { UNIVERSES, searchOrder, sorted, openSampleData, type SearchRequest, type Stars, type SampleData } from './sample-data.ts';

describe('data interface through the generated client: X-Ray, smart search, inspirations and simulations', function () {
  this.timeout(60_000);
  // Set once the platform has started (before); `{} as SampleData` only gives them their types.
  let { platform, shapes, client, factors, global, universes, newClient, xray, search } = {} as SampleData;

  before(async () => {
    ({ platform, shapes, client, factors, global, universes, newClient, xray, search } = await openSampleData());
  });
  after(() => platform?.stop());

  it('scores every universe with 1 to 5 stars or null per factor, quintiles over the normalization universe, under every group_split_type', async () => {
    const stars: Record<string, Stars> = {};
    for (const name of UNIVERSES) {
      stars[name] = await xray({ universe_name: name });
      assert.deepEqual(sorted(Object.keys(stars[name]!)), universes[name]);
      for (const scores of Object.values(stars[name]!)) {
        assert.deepEqual(Object.keys(scores), factors);
        for (const s of Object.values(scores)) assert.ok(s === null || (Number.isInteger(s) && s >= 1 && s <= 5), `stars ${s}`);
      }
    }
    for (const factor of factors) {
      const seen = new Set(
        Object.values(stars.GLOBAL!)
          .map((s) => s[factor])
          .filter((s) => s !== null),
      );
      assert.deepEqual([...seen].sort(), [1, 2, 3, 4, 5], `${factor}: every quintile over GLOBAL`);
    }
    // ROBO instruments ranked among GLOBAL score as they do in the GLOBAL answer.
    const roboInGlobal = await xray({ universe_name: 'GLOBAL', instrument_universe: 'ROBO', normalization_universe: 'GLOBAL' });
    assert.deepEqual(roboInGlobal, Object.fromEntries(universes.ROBO!.map((isin) => [isin, stars.GLOBAL![isin]!])));

    const splits = shapes.schema('GroupSplitType').enum as components['schemas']['GroupSplitType'][];
    assert.equal(splits.length, 7);
    for (const split of splits) {
      const grouped = await xray({ universe_name: 'GLOBAL', group_split_type: split });
      assert.deepEqual(sorted(Object.keys(grouped)), universes.GLOBAL, split);
    }
    const bySector = await xray({ universe_name: 'GLOBAL', group_split_type: 'SECTOR' });
    assert.notDeepEqual(bySector, stars.GLOBAL, 'ranking within sectors changes some stars');

    const unknownFactor = await client.GET('/xray/universe/', { params: { query: { universe_name: 'GLOBAL', fields: ['VALUE_STARS', 'LUCK_STARS'] } } });
    assert.deepEqual(shapes.problem('/xray/universe/', 'get', unknownFactor, 422, 'unknown_field').errors?.[0]?.loc, ['query', 'fields', 1]);
    const unknownUniverse = await client.GET('/xray/universe/', { params: { query: { universe_name: 'NOPE', fields: ['VALUE_STARS'] } } });
    shapes.problem('/xray/universe/', 'get', unknownUniverse, 404, 'not_found');
  });

  it('filters and sorts in smart search, echoing the request in the documented response shape', async () => {
    // `ascending` is left out on purpose (the contract defaults it to false); the generated type
    // marks it required because it has a default, hence the cast.
    const request = {
      query: { reference: '$DIVIDEND_YIELD >= 0.01', xray: '$VALUE_STARS >= 3', derived: '$ANALYST_UPWARD_POTENTIAL > 0.05' },
      sorting_variables: {
        xray: ['PROFITABILITY_STARS'],
        derived: ['ANALYST_UPWARD_POTENTIAL'],
        sorting_order: ['PROFITABILITY_STARS', 'ANALYST_UPWARD_POTENTIAL'],
      },
      xray_parameters: { normalization_universe: 'GLOBAL', instrument_universe: 'GLOBAL', group_split_type: 'SECTOR' as const },
    };
    const found = await search(request as SearchRequest);
    assert.deepEqual(found.query, request.query);
    assert.deepEqual(found.xray_parameters, request.xray_parameters);
    assert.deepEqual(found.sorting_variables, { reference: [], ...request.sorting_variables, ascending: false });
    assert.deepEqual(found.instruments_predefined, []);
    // The same answer computed here from the reference listing and the X-Ray scores of that scope.
    const stars = await xray({ universe_name: 'GLOBAL', group_split_type: 'SECTOR' });
    const upside = (isin: string) => {
      const { price, analyst_target_price: target } = global[isin]!;
      return price && target !== null && target !== undefined ? target / price - 1 : null;
    };
    const expected = universes
      .GLOBAL!.filter((isin) => (global[isin]!.dividend_yield ?? -1) >= 0.01 && (stars[isin]!.VALUE_STARS ?? 0) >= 3 && (upside(isin) ?? 0) > 0.05)
      .sort(searchOrder([(isin) => stars[isin]!.PROFITABILITY_STARS ?? null, upside], false));
    assert.ok(expected.length > 3, `a search that finds something (${expected.length})`);
    assert.deepEqual(
      found.instruments,
      expected.map((isin) => ({ isin, name: global[isin]!.name })),
    );

    const lowYieldFirst = await search({
      query: {},
      sorting_variables: { reference: ['DIVIDEND_YIELD'], sorting_order: ['DIVIDEND_YIELD'], ascending: true },
      group_split_type: 'REGION',
    });
    const byYield = [...universes.GLOBAL!].sort(searchOrder([(isin) => global[isin]!.dividend_yield ?? null], true));
    assert.ok(global[byYield.at(-1)!]!.dividend_yield === null, 'some instruments have no yield: they come last');
    assert.deepEqual(
      lowYieldFirst.instruments.map((i) => i.isin),
      byYield,
    );
    assert.equal(lowYieldFirst.sorting_variables.ascending, true);
    assert.equal(lowYieldFirst.xray_parameters.group_split_type, 'REGION', 'a top-level group_split_type is the effective one');
    const both = await search({ query: {}, xray_parameters: { group_split_type: 'SIZE' }, group_split_type: 'REGION' });
    assert.equal(both.xray_parameters.group_split_type, 'SIZE', 'the one inside xray_parameters wins');

    const or = await search({ query: { xray: '($VALUE_STARS == 5 | $GROWTH_STARS == 5) & $SIZE_STARS != 1' } });
    const union = await xray({ universe_name: 'GLOBAL' });
    const passes = (s: Record<string, number | null>) => (s.VALUE_STARS === 5 || s.GROWTH_STARS === 5) && s.SIZE_STARS !== null && s.SIZE_STARS !== 1;
    assert.deepEqual(
      or.instruments.map((i) => i.isin),
      universes.GLOBAL!.filter((isin) => passes(union[isin]!)),
    );

    const everything = await search({ query: {} });
    assert.deepEqual(
      everything.instruments.map((i) => i.isin),
      universes.GLOBAL,
      'no filter: the whole universe by ISIN',
    );
    assert.deepEqual(everything.query, { reference: null, xray: null, derived: null });
    assert.deepEqual(everything.xray_parameters, { normalization_universe: null, instrument_universe: null, group_split_type: null });
    assert.deepEqual(everything.sorting_variables, { reference: [], xray: [], derived: [], sorting_order: [], ascending: false });

    const unlisted = await client.POST('/smart-search/', {
      body: { query: {}, sorting_variables: { xray: ['VALUE_STARS'], sorting_order: ['GROWTH_STARS'], ascending: false } },
    });
    assert.deepEqual(shapes.problem('/smart-search/', 'post', unlisted, 422, 'validation_failed').errors?.[0]?.loc, [
      'body',
      'sorting_variables',
      'sorting_order',
      0,
    ]);
  });

  it('lists inspirations with their instruments, and puts, lists and deletes a custom definition', async () => {
    const c = await newClient();
    const definitions = shapes.ok('/inspiration/definition/', 'get', await c.GET('/inspiration/definition/'));
    const ids = definitions.map((d) => d.id);
    assert.ok(ids.length > 0 && definitions.every((d) => !d.custom));
    assert.deepEqual(ids, sorted(ids));
    const all = shapes.ok('/inspiration/', 'get', await c.GET('/inspiration/'));
    assert.deepEqual(
      all.map(({ instruments, ...definition }) => definition),
      definitions,
    );
    for (const inspiration of all) {
      // Without xray_parameters smart search ranks over the same default scope: all the tenant's universes.
      const same = await search({ query: { xray: inspiration.query.xray } }, c);
      assert.deepEqual(inspiration.instruments, same.instruments, inspiration.id);
    }
    assert.ok(all.some((i) => i.instruments.length > 0));
    const two = shapes.ok('/inspiration/', 'get', await c.GET('/inspiration/', { params: { query: { id: [ids[1]!, ids[0]!] } } }));
    assert.deepEqual(
      two.map((i) => i.id),
      ids.slice(0, 2),
    );

    const path = { inspiration_id: 'house_value_picks' };
    const input = {
      name: 'House value picks',
      description: 'Undervalued, profitable companies.',
      type: 'inspiration' as const,
      query: { xray: '$VALUE_STARS >= 4 & $PROFITABILITY_STARS >= 3' },
    };
    const created = await c.PUT('/inspiration/definition/{inspiration_id}', { params: { path }, body: input });
    assert.deepEqual(shapes.ok('/inspiration/definition/{inspiration_id}', 'put', created, 201), { id: path.inspiration_id, custom: true, ...input });
    assert.equal(created.response.headers.get('location'), '/inspiration/definition/house_value_picks');
    const replaced = await c.PUT('/inspiration/definition/{inspiration_id}', { params: { path }, body: { ...input, name: 'House picks' } });
    assert.equal(shapes.ok('/inspiration/definition/{inspiration_id}', 'put', replaced, 200).name, 'House picks');

    const listed = shapes.ok('/inspiration/definition/', 'get', await c.GET('/inspiration/definition/'));
    assert.deepEqual(
      listed.map((d) => d.id),
      sorted([...ids, path.inspiration_id]),
    );
    assert.equal(listed.find((d) => d.id === path.inspiration_id)!.custom, true);
    const own = shapes.ok('/inspiration/', 'get', await c.GET('/inspiration/', { params: { query: { id: [path.inspiration_id] } } }));
    assert.equal(own.length, 1);
    assert.deepEqual(own[0]!.instruments, (await search({ query: { xray: input.query.xray } }, c)).instruments);
    assert.ok(own[0]!.instruments.length > 0);

    const putPath = '/inspiration/definition/{inspiration_id}';
    shapes.problem(putPath, 'put', await c.PUT(putPath, { params: { path: { inspiration_id: ids[0]! } }, body: input }), 409, 'state_conflict');
    shapes.problem(putPath, 'delete', await c.DELETE(putPath, { params: { path: { inspiration_id: ids[0]! } } }), 409, 'state_conflict');
    shapes.problem(putPath, 'put', await c.PUT(putPath, { params: { path }, body: { ...input, query: { xray: '$VALUE_STARS >=' } } }), 400, 'invalid_filter');
    shapes.problem(putPath, 'put', await c.PUT(putPath, { params: { path }, body: { ...input, query: { xray: '$LUCK_STARS >= 4' } } }), 422, 'unknown_field');

    const deleted = await c.DELETE(putPath, { params: { path } });
    assert.equal(deleted.response.status, 204);
    shapes.problem(putPath, 'delete', await c.DELETE(putPath, { params: { path } }), 404, 'not_found');
    const gone = shapes.problem(
      '/inspiration/',
      'get',
      await c.GET('/inspiration/', { params: { query: { id: [ids[0]!, path.inspiration_id] } } }),
      404,
      'not_found',
    );
    assert.match(gone.detail, /house_value_picks/, 'the 404 names the id');
    assert.deepEqual(shapes.ok('/inspiration/definition/', 'get', await c.GET('/inspiration/definition/')), definitions);
  });

  it("simulates future performance: the contract's example answers in the documented shape, reproducibly; a bad request is a 422 with its loc", async () => {
    const path = '/performance/future/';
    type Request = components['schemas']['FuturePerformanceRequest'];
    const operation = (shapes.contract.paths?.[path] as { post: { requestBody: { content: Record<string, { example: Request }> } } }).post;
    const example = operation.requestBody.content['application/json']!.example;
    const body = { ...example, scenarios: 1000 };
    const answer = shapes.ok(path, 'post', await client.POST(path, { body }));
    const dates = ['2025-01-01', '2026-01-01', '2027-01-01'];
    assert.deepEqual(answer.data.deposits.deposits, { '2025-01-01': 1050, '2026-01-01': 1650, '2027-01-01': 2250 }, 'the cumulative deposits of the example');
    for (const q of ['0.05', '0.5', '0.95']) {
      assert.deepEqual(Object.keys(answer.data.value[q]!), dates);
      assert.equal(answer.data.value[q]!['2025-01-01'], 1050);
      assert.equal(answer.data.return[q]!['2025-01-01'], 0);
    }
    assert.ok(answer.data.value['0.05']!['2027-01-01']! < answer.data.value['0.95']!['2027-01-01']!);
    assert.deepEqual(shapes.ok(path, 'post', await client.POST(path, { body })), answer, 'the same seed gives the same answer');
    const late = await client.POST(path, { body: { ...body, end_date: '2024-12-31' } });
    assert.deepEqual(shapes.problem(path, 'post', late, 422, 'validation_failed').errors?.[0]?.loc, ['body', 'end_date']);
  });
});
