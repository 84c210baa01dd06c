import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { demoForeignPolicy, demoPolicies, policyPatch, unpricedIsins, type DemoPolicy, type PolicyInstrument } from '../src/sample/demo-policies.ts';
import { generateSample } from '../src/sample/generate.ts';
import { applySchema } from '../src/store/schema.ts';

/** An EUR-priced ETF; `n` makes its ISIN. */
const etf = (n: number, over: Partial<PolicyInstrument> = {}): PolicyInstrument => ({
  isin: `IE00000000${String(n).padStart(2, '0')}`,
  instrument_type: 'ETF',
  asset_class: 'EQUITY',
  asset_subclass: 'DEVELOPED_EQUITY',
  region: 'NORTH_AMERICA',
  currency: 'EUR',
  price: 50,
  ter: 0.002,
  ...over,
});
const bond = (n: number, over: Partial<PolicyInstrument> = {}) =>
  etf(n, { asset_class: 'FIXED_INCOME', asset_subclass: 'GOVERNMENT_BOND', region: 'EUROPE', ...over });

/** Basis points of a weight, failing when the weight is not a whole number of them. */
const bps = (w: number) => {
  const b = Math.round(w * 10_000);
  assert.ok(Math.abs(w * 10_000 - b) < 1e-6, `${w} is whole basis points`);
  return b;
};

/** Weights sum to 1 less the cash buffer, each asset class's sum lies in its band, every ISIN is an EUR-priced ETF of `instruments`. */
function assertConsistent(policy: DemoPolicy, instruments: PolicyInstrument[]) {
  const byIsin = new Map(instruments.map((i) => [i.isin, i]));
  const { model_portfolio: model, asset_class_bands: bands, cash_buffer } = policy.config;
  const total = Object.values(model).reduce((a, w) => a + bps(w), 0);
  assert.equal(total, 10_000 - bps(cash_buffer), `${policy.name}: weights add up to 1 less the cash buffer`);
  assert.ok(total <= 10_000);
  const perClass: Record<string, number> = {};
  for (const [isin, weight] of Object.entries(model)) {
    const instrument = byIsin.get(isin);
    assert.ok(instrument, `${isin} is an instrument of the reference data`);
    assert.equal(instrument.currency, 'EUR', isin);
    assert.equal(instrument.instrument_type, 'ETF', isin);
    assert.ok(weight > 0 && weight <= 1, `${isin} ${weight}`);
    perClass[instrument.asset_class!] = (perClass[instrument.asset_class!] ?? 0) + bps(weight);
  }
  for (const [assetClass, sum] of Object.entries(perClass)) {
    const band = bands[assetClass];
    assert.ok(band, `${policy.name} has a band for ${assetClass}`);
    assert.ok(bps(band[0]) <= sum && sum <= bps(band[1]), `${policy.name}: ${assetClass} ${sum} bps in [${band}]`);
  }
  for (const [lo, hi] of Object.values(bands)) assert.ok(0 <= lo && lo <= hi && hi <= 1, `band [${lo}, ${hi}]`);
}

/** RFC 7396 applied to plain JSON, to check what a PATCH makes of a stored policy. */
function merge(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = merge(out[key], value);
  }
  return out;
}

async function sampleInstruments(instruments: number): Promise<PolicyInstrument[]> {
  const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const conn = await instance.connect();
  try {
    await applySchema(conn, 'reference');
    await generateSample(conn, { instruments, years: 1, seed: 42, endDate: '2026-11-20' });
    const rows = await conn.runAndReadAll(
      'select isin, instrument_type, asset_class, asset_subclass, region, currency, price::double as price, ter::double as ter from instruments',
    );
    return rows.getRowObjectsJson() as unknown as PolicyInstrument[];
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

describe('demo policies (the choice of ETFs and weights)', function () {
  this.timeout(60_000);

  for (const size of [60, 400, 2000]) {
    it(`gives five policies of EUR-priced ETFs with consistent weights and bands on a sample of ${size} instruments`, async () => {
      const instruments = await sampleInstruments(size);
      const { policies, missing } = demoPolicies(instruments);
      assert.deepEqual(missing, []);
      assert.deepEqual(
        policies.map((p) => [p.level, p.name, p.external_id]),
        ['defensive', 'conservative', 'balanced', 'growth', 'aggressive'].map((level) => [
          level,
          `Sample ${level[0]!.toUpperCase()}${level.slice(1)}`,
          `sample-policy-${level}`,
        ]),
      );
      for (const policy of policies) assertConsistent(policy, instruments);
      // Every region of equity and every kind of bond of the sample, one ETF each.
      const classOf = new Map(instruments.map((i) => [i.isin, i]));
      const held = Object.keys(policies[2]!.config.model_portfolio).map((isin) => `${classOf.get(isin)!.asset_subclass} ${classOf.get(isin)!.region}`);
      assert.deepEqual(held.sort(), [
        'CORPORATE_BOND EUROPE',
        'DEVELOPED_EQUITY ASIA_PACIFIC',
        'DEVELOPED_EQUITY EUROPE',
        'DEVELOPED_EQUITY NORTH_AMERICA',
        'EMERGING_EQUITY EMERGING_MARKETS',
        'GOVERNMENT_BOND EUROPE',
        'HIGH_YIELD_BOND GLOBAL',
        'INFLATION_LINKED_BOND GLOBAL',
      ]);
    });
  }

  it('raises the equity share from level to level, keeps 2 % cash, whole shares, costs and a minimum funding amount', () => {
    const { policies } = demoPolicies([etf(1), bond(2)]);
    const equity = policies.map((p) => p.config.model_portfolio[etf(1).isin] ?? 0);
    assert.deepEqual(equity, [0.2, 0.39, 0.59, 0.78, 0.98]);
    assert.deepEqual(
      policies.map((p) => p.config.model_portfolio[bond(2).isin]),
      [0.78, 0.59, 0.39, 0.2, undefined],
    );
    assert.deepEqual(policies[4]!.config.asset_class_bands, { EQUITY: [0.88, 1], FIXED_INCOME: [0, 0.1] });
    assert.deepEqual(policies[0]!.config.asset_class_bands, { EQUITY: [0.1, 0.3], FIXED_INCOME: [0.68, 0.88] });
    for (const p of policies) {
      assert.deepEqual(
        { ...p.config, asset_class_bands: undefined, model_portfolio: undefined },
        {
          minimum_funding_amount: '1000',
          cash_buffer: 0.02,
          rebalancing_threshold: 0.05,
          fractional_shares: false,
          transaction_cost_bps: 10,
          asset_class_bands: undefined,
          model_portfolio: undefined,
        },
      );
    }
    assert.equal(policies[2]!.description, 'Demo policy of the sample universe: 59 % equity and 39 % bond ETFs priced in EUR, 2 % cash.');
  });

  it('splits a class over its sleeves in whole basis points: 55/25/10/10 of 59 % equity', () => {
    const regions = [
      etf(1),
      etf(2, { region: 'EUROPE' }),
      etf(3, { region: 'ASIA_PACIFIC' }),
      etf(4, { asset_subclass: 'EMERGING_EQUITY', region: 'EMERGING_MARKETS' }),
    ];
    const balanced = demoPolicies([...regions, bond(5)]).policies[2]!;
    assert.deepEqual(balanced.config.model_portfolio, {
      [etf(1).isin]: 0.3245,
      [etf(2).isin]: 0.1475,
      [etf(3).isin]: 0.059,
      [etf(4).isin]: 0.059,
      [bond(5).isin]: 0.39,
    });
  });

  it('takes the cheapest EUR-priced ETF of a sleeve (ties by ISIN), whatever the order it is given in', () => {
    const instruments = [
      etf(1, { ter: 0.003 }),
      etf(2, { ter: 0.001, currency: 'USD' }),
      etf(3, { ter: 0.0015 }),
      etf(4, { ter: 0.0015 }),
      etf(5, { ter: 0.0001, price: null }),
      etf(6, { ter: 0.0001, instrument_type: 'STOCK' }),
      etf(7, { ter: null }),
      bond(8),
    ];
    const held = (list: PolicyInstrument[]) => Object.keys(demoPolicies(list).policies[0]!.config.model_portfolio).sort();
    assert.deepEqual(held(instruments), [etf(3).isin, bond(8).isin]);
    assert.deepEqual(held([...instruments].reverse()), [etf(3).isin, bond(8).isin]);
  });

  it('falls back to the cheapest ETF of a class when none fits its sleeves, and gives no policy without EUR-priced ETFs of both classes', () => {
    const otherBond = bond(2, { asset_subclass: 'MUNICIPAL_BOND', region: 'NORTH_AMERICA' });
    assert.deepEqual(demoPolicies([etf(1), otherBond]).policies[0]!.config.model_portfolio, { [etf(1).isin]: 0.2, [otherBond.isin]: 0.78 });
    assert.deepEqual(demoPolicies([etf(1), bond(2, { currency: 'USD' })]), { policies: [], missing: ['FIXED_INCOME'] });
    assert.deepEqual(demoPolicies([]), { policies: [], missing: ['EQUITY', 'FIXED_INCOME'] });
    assert.deepEqual(demoPolicies([etf(1, { currency: 'CHF' }), bond(2, { currency: 'CHF' })], 'CHF').missing, []);
  });

  it('tells a stored model that names instruments not priced in EUR, and patches it into the current choice', () => {
    const instruments = [etf(1), etf(2, { region: 'EUROPE' }), bond(3)];
    const wanted = demoPolicies(instruments).policies[1]!;
    assert.deepEqual(unpricedIsins(wanted.config, instruments), []);
    const stored = {
      name: 'Sample Conservative',
      description: 'older',
      external_id: wanted.external_id,
      config: { ...wanted.config, model_portfolio: { [etf(1).isin]: 0.3, XS0000000009: 0.5 }, asset_class_bands: { EQUITY: [0, 1], COMMODITY: [0, 0.1] } },
    };
    assert.deepEqual(unpricedIsins(stored.config, instruments), ['XS0000000009']);
    assert.deepEqual(unpricedIsins(stored.config, [...instruments, etf(9, { isin: 'XS0000000009', currency: 'USD' })]), ['XS0000000009']);
    const { level: _level, ...body } = wanted;
    assert.deepEqual(merge(stored, policyPatch(stored, wanted)), body);
  });

  it('adds a balanced policy whose equity is in dollar ETFs and bonds in EUR, converting at 10 bps, and none without both', () => {
    const usd = (n: number, over: Partial<PolicyInstrument> = {}) => etf(n, { currency: 'USD', ...over });
    const instruments = [etf(1), usd(2, { ter: 0.003 }), usd(3, { ter: 0.001 }), usd(4, { region: 'EUROPE' }), bond(5), bond(6, { currency: 'USD' })];
    const policy = demoForeignPolicy(instruments)!;
    assert.deepEqual(
      [policy.level, policy.external_id, policy.name, policy.config.fx_cost_bps],
      ['balanced_usd', 'sample-policy-balanced-usd', 'Sample Balanced USD', 10],
    );
    // The balanced level's 59 % equity, split 55/25 between the cheapest dollar ETF of each sleeve; 39 % in the EUR bond.
    assert.deepEqual(policy.config.model_portfolio, { [usd(3).isin]: 0.4056, [usd(4).isin]: 0.1844, [bond(5).isin]: 0.39 });
    assert.deepEqual(policy.config.asset_class_bands, demoPolicies(instruments.filter((i) => i.currency === 'EUR')).policies[2]!.config.asset_class_bands);
    assert.deepEqual(unpricedIsins(policy.config, instruments, ['EUR', 'USD']), []);
    assert.deepEqual(unpricedIsins(policy.config, instruments), [usd(3).isin, usd(4).isin], 'in EUR alone the dollar ETFs are unpriced');
    assert.equal(demoForeignPolicy([etf(1), bond(5)]), undefined);
    assert.equal(demoForeignPolicy([usd(2), bond(6, { currency: 'USD' })]), undefined);
    // The EUR policies stay as they were: a dollar ETF is no candidate for them.
    assert.deepEqual(demoPolicies(instruments).policies[2]!.config.model_portfolio, { [etf(1).isin]: 0.59, [bond(5).isin]: 0.39 });
  });
});
