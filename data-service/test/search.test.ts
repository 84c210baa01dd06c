import assert from 'node:assert/strict';
import { assertProblem, call } from '@platform/test-support/http';
import type { TestTenant } from '@platform/test-support/platform';
import { isin, startFixturePlatform, tenantId, type FixturePlatform } from './xray-fixture.ts';

describe('smart search (POST /smart-search/)', () => {
  let fx: FixturePlatform;
  let a: TestTenant;
  let b: TestTenant;
  const idA = tenantId('sa');
  const unknownIsin = 'XZ0000000099';

  const search = (tenant: TestTenant, body: unknown) =>
    call(`${fx.platform.dataUrl}/smart-search/`, { body, headers: { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey } });
  /** The instrument numbers found, in order. */
  const found = async (tenant: TestTenant, body: unknown) => {
    const res = await search(tenant, body);
    assert.equal(res.status, 200, res.text);
    return res.body.data.instruments.map((i: { isin: string }) => Number(i.isin.slice(2)));
  };

  before(async () => {
    fx = await startFixturePlatform([{ tenant: idA, name: 'MINE', isins: [isin(2), isin(7), unknownIsin] }]);
    a = await fx.platform.tenant(idA);
    b = await fx.platform.tenant();
  });
  after(() => fx.platform.stop());

  it('filters on a reference field, ordered by ISIN without sorting, and echoes the request', async () => {
    const res = await search(b, { query: { reference: '$DIVIDEND_YIELD >= 0.03' } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      data: {
        query: { reference: '$DIVIDEND_YIELD >= 0.03', xray: null, derived: null },
        xray_parameters: { normalization_universe: null, instrument_universe: null, group_split_type: null },
        instruments_predefined: [],
        sorting_variables: { reference: [], xray: [], derived: [], sorting_order: [], ascending: false },
        instruments: [2, 3, 6, 7, 9, 11].map((n) => ({ isin: isin(n), name: `Instrument ${n}` })),
      },
      meta: {},
    });
  });

  it('selects the whole instrument universe with an empty query', async () => {
    assert.deepEqual(await found(b, { query: {} }), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.deepEqual(await found(b, { query: {}, xray_parameters: { instrument_universe: 'ROBO' } }), [1, 2, 3, 9, 10, 11]);
  });

  it('compares text fields with quoted strings and combines filters with & and |', async () => {
    // FIN: I3 20, I4 10, I7 40, I8 80, I10 25, I11 no price.
    assert.deepEqual(await found(b, { query: { reference: "$SECTOR == 'FIN' & $PRICE < 50" } }), [3, 4, 7, 10]);
    assert.deepEqual(await found(b, { query: { reference: "$SECTOR != 'FIN' & ($PRICE >= 100 | $DIVIDEND_YIELD > 0.035)" } }), [1, 5, 6, 9]);
  });

  it('sorts by a derived field, descending by default, ties by ISIN', async () => {
    // Upward potential: I5 .5, I10 .4, I7 .25, I8 .25, I2 .2, I12 .2, I1 .1, I9 .1 (I3 −.05; I4, I6, I11 null).
    const body = {
      query: { derived: '$ANALYST_UPWARD_POTENTIAL > 0' },
      sorting_variables: { derived: ['ANALYST_UPWARD_POTENTIAL'], sorting_order: ['ANALYST_UPWARD_POTENTIAL'] },
    };
    assert.deepEqual(await found(b, body), [5, 10, 7, 8, 2, 12, 1, 9]);
    assert.deepEqual(await found(b, { ...body, sorting_variables: { ...body.sorting_variables, ascending: true } }), [1, 9, 2, 12, 7, 8, 10, 5]);
  });

  it('puts null values last in either direction', async () => {
    const sort = (ascending: boolean) => ({ query: {}, sorting_variables: { reference: ['DIVIDEND_YIELD'], sorting_order: ['DIVIDEND_YIELD'], ascending } });
    assert.deepEqual(await found(b, sort(true)), [8, 1, 12, 4, 10, 2, 7, 6, 11, 3, 9, 5]);
    assert.deepEqual(await found(b, sort(false)), [9, 3, 11, 6, 7, 2, 10, 4, 12, 1, 8, 5]);
  });

  it('filters and sorts on X-Ray stars with the X-Ray parameters', async () => {
    // Whole universe VALUE stars: I7, I8 → 4; I9, I10 → 5.
    assert.deepEqual(await found(b, { query: { xray: '$VALUE_STARS >= 4' } }), [7, 8, 9, 10]);
    // By SECTOR: TECH I6 4, I9 5; FIN I8 4, I10 5 (top level or inside xray_parameters, which wins).
    assert.deepEqual(await found(b, { query: { xray: '$VALUE_STARS >= 4' }, group_split_type: 'SECTOR' }), [6, 8, 9, 10]);
    const res = await search(b, { query: { xray: '$VALUE_STARS >= 4' }, group_split_type: 'REGION', xray_parameters: { group_split_type: 'SECTOR' } });
    assert.deepEqual(
      res.body.data.instruments.map((i: { isin: string }) => i.isin),
      [6, 8, 9, 10].map(isin),
    );
    assert.equal(res.body.data.xray_parameters.group_split_type, 'SECTOR');
    // Within ROBO (I1 10, I2 20, I3 30, I9 90, I10 100) ranked among ROBO: I9 4, I10 5; among GLOBAL: I9, I10 5 and no 4s.
    assert.deepEqual(await found(b, { query: { xray: '$VALUE_STARS == 4' }, xray_parameters: { instrument_universe: 'ROBO' } }), [9]);
    assert.deepEqual(
      await found(b, { query: { xray: '$VALUE_STARS == 4' }, xray_parameters: { instrument_universe: 'ROBO', normalization_universe: 'GLOBAL' } }),
      [],
    );
  });

  it('applies all three filters together and sorts on several keys', async () => {
    // VALUE 5: I9, I10; GROWTH 1: I4, I5; GROWTH stars of I9, I10 are 4. Then upward potential ≥ .1 drops I4 (null).
    const body = {
      query: { xray: '($VALUE_STARS == 5 | $GROWTH_STARS == 1) & $GROWTH_STARS != 3', derived: '$ANALYST_UPWARD_POTENTIAL >= 0.1', reference: '$PRICE > 0' },
      sorting_variables: { xray: ['VALUE_STARS'], derived: ['ANALYST_UPWARD_POTENTIAL'], sorting_order: ['VALUE_STARS', 'ANALYST_UPWARD_POTENTIAL'] },
    };
    // VALUE desc: I9 (5, .1), I10 (5, .4) → I10 first by potential; then I5 (3).
    assert.deepEqual(await found(b, body), [10, 9, 5]);
  });

  it("searches the union of the tenant's universes by default, and only its own", async () => {
    // A's MINE adds an instrument the reference data does not know (no name, no values); B never sees it.
    const all = await search(a, { query: {} });
    assert.deepEqual(all.body.data.instruments.at(-1), { isin: unknownIsin, name: null });
    assert.equal(all.body.data.instruments.length, 13);
    assert.deepEqual(await found(b, { query: {} }), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.deepEqual(await found(a, { query: { reference: '$PRICE >= 0' }, xray_parameters: { instrument_universe: 'MINE' } }), [2, 7]);
    assert.deepEqual(await found(a, { query: {}, xray_parameters: { instrument_universe: 'MINE' } }), [2, 7, 99]);
    assertProblem(await search(b, { query: {}, xray_parameters: { instrument_universe: 'MINE' } }), 404, 'not_found');
    assertProblem(await search(b, { query: {}, xray_parameters: { normalization_universe: 'MINE' } }), 404, 'not_found');
  });

  it("reads the tenant's custom values over the provider's for reference fields, for that tenant only", async () => {
    const upload = await call(`${fx.platform.dataUrl}/data/custom/reference/batch/`, {
      body: {
        data: [
          { instrument_id: isin(1), reference_data: { dividend_yield: 0.5, sector: 'FIN', name: 'Renamed' } },
          { instrument_id: isin(2), reference_data: { dividend_yield: null } },
        ],
      },
      headers: { 'x-tenant-id': a.tenantId, 'x-api-key': a.apiKey },
    });
    assert.equal(upload.status, 200, upload.text);
    // I1's yield .01 → .5 and sector TECH → FIN; I2's .03 → an explicit null, which fails.
    const res = await search(a, { query: { reference: "$DIVIDEND_YIELD >= 0.03 & $SECTOR == 'FIN'" }, xray_parameters: { instrument_universe: 'GLOBAL' } });
    assert.deepEqual(res.body.data.instruments, [{ isin: isin(1), name: 'Renamed' }, ...[3, 7, 11].map((n) => ({ isin: isin(n), name: `Instrument ${n}` }))]);
    assert.deepEqual(await found(a, { query: { reference: '$DIVIDEND_YIELD >= 0.03' }, xray_parameters: { instrument_universe: 'ROBO' } }), [1, 3, 9, 11]);
    assert.deepEqual(await found(b, { query: { reference: '$DIVIDEND_YIELD >= 0.03' }, xray_parameters: { instrument_universe: 'ROBO' } }), [2, 3, 9, 11]);
  });

  it('refuses a filter that does not parse: 400 invalid_filter with the position', async () => {
    const res = await search(b, { query: { reference: '$PRICE > 0', xray: '$VALUE_STARS >= & $STABILITY_STARS >= 3' } });
    assertProblem(res, 400, 'invalid_filter');
    assert.equal(res.body.position, 16);
    assert.deepEqual(res.body.errors[0].loc, ['body', 'query', 'xray']);
    assert.match(res.body.errors[0].msg, /at position 16/);
    assert.equal(res.body.detail, 'query.xray: expected a number or a quoted string, found "&" at position 16 in \'$VALUE_STARS >= & $STABILITY_STARS >= 3\'');
    const unbalanced = await search(b, { query: { derived: '($ANALYST_UPWARD_POTENTIAL > 0' } });
    assertProblem(unbalanced, 400, 'invalid_filter');
    assert.equal(unbalanced.body.position, 30);
    const wrongType = await search(b, { query: { reference: "$PRICE > 'cheap'" } });
    assertProblem(wrongType, 400, 'invalid_filter');
    assert.equal(wrongType.body.position, 9);
  });

  it('refuses unknown fields in filters and sorting: 422 unknown_field naming them', async () => {
    const inFilter = await search(b, { query: { xray: '$VALUE_STARS >= 4 & $PRICE > 1' } });
    assertProblem(inFilter, 422, 'unknown_field');
    assert.deepEqual(inFilter.body.errors[0].loc, ['body', 'query', 'xray']);
    assert.match(inFilter.body.detail, /'PRICE'.*allowed: VALUE_STARS/);
    const inSort = await search(b, { query: {}, sorting_variables: { reference: ['NAME', 'YIELD'], sorting_order: ['NAME'] } });
    assertProblem(inSort, 422, 'unknown_field');
    assert.deepEqual(inSort.body.errors[0].loc, ['body', 'sorting_variables', 'reference', 1]);
  });

  it('refuses a sort field not listed by kind: 422 validation_failed', async () => {
    const res = await search(b, { query: {}, sorting_variables: { reference: ['PRICE'], sorting_order: ['PRICE', 'VALUE_STARS'] } });
    assertProblem(res, 422, 'validation_failed');
    assert.deepEqual(res.body.errors[0].loc, ['body', 'sorting_variables', 'sorting_order', 1]);
  });

  it('validates the body against the contract', async () => {
    assertProblem(await search(b, { sorting_variables: { sorting_order: ['PRICE'] } }), 422, 'validation_failed');
    assertProblem(await search(b, { query: { other: '$A > 1' } }), 422, 'validation_failed');
  });
});
