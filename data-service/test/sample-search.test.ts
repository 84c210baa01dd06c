import assert from 'node:assert/strict';
import { call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';

// Smart search's derived filter on the generated sample universe (the one `npm test` generates):
// analyst targets lie above and below the price, so upward potential splits the covered stocks.
describe('smart search on the sample universe: analyst upward potential', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  /** Upward potential (target / price − 1) of every instrument with a target, computed from its reference data. */
  let potentials: Map<string, number>;

  const keys = () => ({ 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey });
  const found = async (body: unknown): Promise<string[]> => {
    const res = await call(`${platform.dataUrl}/smart-search/`, { body, headers: keys() });
    assert.equal(res.status, 200, res.text);
    return res.body.data.instruments.map((i: { isin: string }) => i.isin);
  };
  const where = (test: (p: number) => boolean) => [...potentials].filter(([, p]) => test(p)).map(([isin]) => isin);

  before(async () => {
    platform = await startTestPlatform();
    tenant = await platform.tenant();
    const res = await call(`${platform.dataUrl}/data/reference/universe/?universe_name=GLOBAL&fields=PRICE&fields=ANALYST_TARGET_PRICE`, { headers: keys() });
    assert.equal(res.status, 200, res.text);
    const records = Object.entries(res.body.data as Record<string, { price: number | null; analyst_target_price: number | null }>);
    potentials = new Map(records.flatMap(([isin, r]) => (r.price && r.analyst_target_price !== null ? [[isin, r.analyst_target_price / r.price - 1]] : [])));
  });
  after(() => platform?.stop());

  it('holds instruments with positive and with negative upward potential', () => {
    const up = where((p) => p > 0).length;
    const down = where((p) => p < 0).length;
    assert.ok(up > 50 && down > 20, `${up} above and ${down} below the price of ${potentials.size} with a target`);
  });

  it('finds exactly the instruments above their price with $ANALYST_UPWARD_POTENTIAL > 0, and those below with < 0', async () => {
    const up = await found({ query: { derived: '$ANALYST_UPWARD_POTENTIAL > 0' } });
    const down = await found({ query: { derived: '$ANALYST_UPWARD_POTENTIAL < 0' } });
    assert.ok(up.length > 0 && down.length > 0, `${up.length} up, ${down.length} down`);
    assert.deepEqual(up, where((p) => p > 0).sort());
    assert.deepEqual(down, where((p) => p < 0).sort());
  });

  it('sorts by upward potential: the steepest fall first when ascending, the largest gain first otherwise', async () => {
    const body = (ascending: boolean) => ({
      query: { derived: '$ANALYST_UPWARD_POTENTIAL > -1' },
      sorting_variables: { derived: ['ANALYST_UPWARD_POTENTIAL'], sorting_order: ['ANALYST_UPWARD_POTENTIAL'], ascending },
    });
    const ranked = [...potentials].sort(([a, x], [b, y]) => x - y || (a < b ? -1 : 1));
    const ascending = await found(body(true));
    assert.equal(ascending.length, potentials.size);
    assert.equal(ascending[0], ranked[0]![0]);
    assert.ok(potentials.get(ascending[0]!)! < -0.15, `lowest potential ${potentials.get(ascending[0]!)}`);
    const descending = await found(body(false));
    assert.equal(potentials.get(descending[0]!), Math.max(...potentials.values()));
    assert.ok(potentials.get(descending[0]!)! > 0.3, `highest potential ${potentials.get(descending[0]!)}`);
  });
});
