import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadOptimizer, type InstrumentFacts, type Optimizer, type OptimizerRequest, type Outcome } from '../../src/optimizer/engine.ts';
import { checkOrders } from '../../src/optimizer/checks.ts';
import { prepare } from '../../src/optimizer/problem.ts';
import { optimizerRequest } from './fixtures.ts';

// Random policies, holdings and prices through the optimizer with the real solver: every outcome is
// well formed, and every SUCCESS keeps every constraint, checked here independently of the engine's
// own checks (plain arithmetic, one cent of tolerance) and by the exported checker
// (docs/adr/0020-optimizer-model.md).

const ISINS = ['IE00B4L5Y983', 'IE00B3F81R35', 'IE00B5BMR087', 'US0378331005', 'DE0005140008', 'FR0000120271'];
const CLASSES = ['EQUITY', 'FIXED_INCOME', 'REAL_ESTATE'];
const STATUSES = ['SUCCESS', 'FAILURE', 'INFEASIBLE', 'NOT_OPTIMIZED'];
const RUNS = 200;

type Spec = {
  price: number | null;
  currency: string;
  assetClass: string | null;
  known: boolean;
  held: number;
  /** Raw model weight; undefined: not in the model portfolio. */
  weight: number | undefined;
};

const cents = (min: number, max: number) => fc.integer({ min, max }).map((c) => c / 100);

function instrument(sound: boolean): fc.Arbitrary<Spec> {
  return fc.record({
    price: sound ? cents(1, 100_000) : fc.oneof({ weight: 30, arbitrary: cents(1, 100_000) }, { weight: 1, arbitrary: fc.constant(null) }),
    // USD has a rate; GBP none (a FAILURE naming the pair).
    currency: sound
      ? fc.constantFrom('EUR', 'EUR', 'USD')
      : fc.oneof({ weight: 20, arbitrary: fc.constant('EUR') }, { weight: 10, arbitrary: fc.constant('USD') }, { weight: 1, arbitrary: fc.constant('GBP') }),
    assetClass: fc.constantFrom(...CLASSES, null),
    known: sound ? fc.constant(true) : fc.oneof({ weight: 30, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    held: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 0, max: 300 }),
      fc.integer({ min: 0, max: 300_000 }).map((m) => m / 1000),
    ),
    weight: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
  });
}

type Scenario = { request: OptimizerRequest; facts: Map<string, InstrumentFacts> };

function scenario(sound: boolean): fc.Arbitrary<Scenario> {
  const swapped = sound ? fc.constant(false) : fc.oneof({ weight: 30, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });
  const band = fc.tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 }), swapped);
  return fc
    .record({
      specs: fc.array(fc.option(instrument(sound), { nil: undefined, freq: 2 }), { minLength: ISINS.length, maxLength: ISINS.length }),
      invested: fc.integer({ min: 0, max: 1000 }),
      cash: fc.oneof({ weight: 10, arbitrary: cents(0, 5_000_000) }, { weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: cents(-10_000, 0) }),
      otherCash: fc.option(cents(0, 100_000), { nil: undefined }),
      bands: fc.array(fc.option(band, { nil: undefined }), { minLength: CLASSES.length, maxLength: CLASSES.length }),
      cashBuffer: fc.integer({ min: 0, max: 20 }).map((p) => p / 100),
      divest: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 4, arbitrary: cents(0, 20_000_000) }, { weight: 1, arbitrary: fc.constant(1e100) }),
      fractional: fc.boolean(),
      bps: fc.integer({ min: 0, max: 100 }),
      fxBps: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 100 })),
      /** The EUR value of one dollar, 4 decimals. */
      usd: fc.integer({ min: 5000, max: 15000 }).map((r) => (r / 1e4).toFixed(4)),
      threshold: fc.integer({ min: 0, max: 10 }).map((p) => p / 100),
    })
    .map((s) => {
      const holdings: Record<string, number> = { $EUR: s.cash };
      const facts = new Map<string, InstrumentFacts>();
      const toBase = { rate: s.usd, date: '2025-03-13' };
      if (s.otherCash !== undefined) {
        holdings.$USD = s.otherCash;
        facts.set('$USD', { price: 1, currency: 'USD', assetClass: null, toBase });
      }
      const raw = s.specs.reduce((sum, spec) => sum + (spec?.weight ?? 0), 0);
      const model: Record<string, number> = {};
      s.specs.forEach((spec, k) => {
        if (!spec) return;
        const isin = ISINS[k]!;
        if (spec.known)
          facts.set(isin, { price: spec.price, currency: spec.currency, assetClass: spec.assetClass, ...(spec.currency === 'USD' ? { toBase } : {}) });
        if (spec.held > 0 || spec.weight === undefined) holdings[isin] = spec.held;
        // Weights scaled to sum to at most invested / 1000, rounded down to 4 decimals.
        if (spec.weight !== undefined) model[isin] = raw === 0 ? 0 : Math.floor(((spec.weight / raw) * s.invested) / 100) / 1e4;
      });
      const bands: Record<string, [number, number]> = {};
      s.bands.forEach((b, j) => {
        if (!b) return;
        const [x, y, swapped] = b;
        const [lower, upper] = x <= y !== swapped ? [x, y] : [y, x];
        bands[CLASSES[j]!] = [lower / 100, upper / 100];
      });
      const request = optimizerRequest({
        holdings,
        model_portfolio: model,
        asset_class_bands: bands,
        cash_buffer: s.cashBuffer,
        divest_amount: s.divest,
        fractional_shares: s.fractional,
        transaction_cost_bps: s.bps,
        fx_cost_bps: s.fxBps,
        rebalancing_threshold: s.threshold,
      });
      return { request, facts };
    });
}

/** The constraints, computed here in plain arithmetic from the request (docs/adr/0020-optimizer-model.md). */
function independentViolations({ request, facts }: Scenario, outcome: Outcome): string[] {
  const violations: string[] = [];
  const t = request.transaction_cost_bps / 10_000;
  const f = (request.fx_cost_bps ?? 0) / 10_000;
  const rate = (key: string) => {
    const toBase = facts.get(key)?.toBase;
    return toBase && 'rate' in toBase ? Number(toBase.rate) : 1;
  };
  const dollarCash = request.holdings.$USD ?? 0;
  const dollarRate = dollarCash === 0 ? 0 : rate('$USD');
  const cash = (request.holdings.$EUR ?? 0) + dollarCash * dollarRate;
  const dollars = (isin: string) => facts.get(isin)!.currency === 'USD';
  const isins = new Set([...Object.keys(request.holdings).filter((k) => !k.startsWith('$')), ...Object.keys(request.model_portfolio)]);
  const price = (isin: string) => facts.get(isin)!.price! * rate(isin);
  const held = (isin: string) => request.holdings[isin] ?? 0;
  let heldValue = 0;
  let heldDollars = 0;
  for (const isin of isins) {
    heldValue += price(isin) * held(isin);
    if (dollars(isin)) heldDollars += price(isin) * held(isin);
  }
  const value = cash + heldValue;
  const freeable = cash + (1 - t) * heldValue - f * heldDollars;
  const sellAll = request.divest_amount > 0 && request.divest_amount >= freeable;
  const divest = sellAll ? freeable : request.divest_amount;
  const invested = sellAll ? 0 : value - divest;
  const tolerance = 0.01 + 1e-9 * Math.max(1, value);

  let cashAfter = cash;
  // Dollars bought beyond the dollars held, or sold on balance, are converted at a cost of f.
  let boughtDollars = 0;
  const classValue = new Map<string, number>();
  for (const isin of isins) {
    const q = outcome.orders[isin]?.shares ?? 0;
    const after = held(isin) + q;
    if (after < -1e-9) violations.push(`${isin} short`);
    if (q > 0 && request.model_portfolio[isin] === undefined) violations.push(`${isin} bought outside the model`);
    if (!request.fractional_shares && !Number.isInteger(q) && q !== -held(isin)) violations.push(`${isin} ${q} not whole`);
    cashAfter -= price(isin) * q + t * price(isin) * Math.abs(q);
    if (dollars(isin)) boughtDollars += price(isin) * q;
    const assetClass = facts.get(isin)!.assetClass;
    if (assetClass !== null) classValue.set(assetClass, (classValue.get(assetClass) ?? 0) + price(isin) * after);
  }
  cashAfter -= f * Math.max(boughtDollars - dollarCash * dollarRate, -boughtDollars, 0);
  for (const [isin, order] of Object.entries(outcome.orders)) {
    if (!isins.has(isin)) violations.push(`${isin} not in the request`);
    if (order.shares === 0) violations.push(`${isin} order of 0 shares`);
    if (Math.abs(order.expected_share_price - price(isin)) > 1e-9 * price(isin)) violations.push(`${isin} price ${order.expected_share_price}`);
    if (dollars(isin) !== (order.currency === 'USD')) violations.push(`${isin} currency ${order.currency}`);
    if (dollars(isin) && (order.expected_share_price_in_currency !== facts.get(isin)!.price || order.fx_rate !== rate(isin)))
      violations.push(`${isin} dollar price ${order.expected_share_price_in_currency} at ${order.fx_rate}`);
    const cost = t * order.expected_share_price * Math.abs(order.shares);
    if (Math.abs(order.expected_transaction_cost - cost) > 0.005 + 1e-9 * cost) violations.push(`${isin} cost ${order.expected_transaction_cost} for ${cost}`);
  }
  if (cashAfter < request.cash_buffer * invested + divest - tolerance) violations.push(`cash ${cashAfter} < ${request.cash_buffer * invested + divest}`);
  for (const [assetClass, [lower, upper]] of Object.entries(request.asset_class_bands) as [string, [number, number]][]) {
    const v = classValue.get(assetClass) ?? 0;
    if (v < lower * invested - tolerance || v > upper * invested + tolerance)
      violations.push(`${assetClass} ${v} outside [${lower * invested}, ${upper * invested}]`);
  }
  return violations;
}

describe('optimizer properties', function () {
  this.timeout(120_000);
  let optimizer: Optimizer;
  before(async () => {
    optimizer = await loadOptimizer();
  });

  it('answers one of the four statuses, with a detail unless SUCCESS, and every SUCCESS keeps every constraint', () => {
    const seen = new Map<string, number>();
    fc.assert(
      fc.property(scenario(false), (s) => {
        const outcome = optimizer(s.request, s.facts);
        seen.set(outcome.status, (seen.get(outcome.status) ?? 0) + 1);
        assert.ok(STATUSES.includes(outcome.status), outcome.status);
        if (outcome.status !== 'SUCCESS') {
          assert.equal(typeof outcome.detail, 'string');
          assert.ok(outcome.detail!.length > 0);
          assert.deepEqual(outcome.orders, {});
          assert.equal(outcome.is_recommended, false);
          return;
        }
        assert.equal(outcome.detail, undefined);
        assert.ok(Object.keys(outcome.orders).length > 0);
        assert.deepEqual(independentViolations(s, outcome), []);
        const prepared = prepare(s.request, s.facts);
        const orders = new Map(Object.entries(outcome.orders).map(([isin, order]) => [isin, order.shares]));
        assert.deepEqual(checkOrders(prepared.problem!, orders), []);
      }),
      { numRuns: RUNS },
    );
    // The generator reaches every status but FAILURE's solver cases (the next test).
    for (const status of STATUSES) assert.ok((seen.get(status) ?? 0) > 0, `${status} never seen: ${JSON.stringify([...seen])}`);
  });

  it('never answers FAILURE to a request with sound prices and policy', () => {
    fc.assert(
      fc.property(
        scenario(true).filter(({ request }) => request.holdings.$EUR! >= 0),
        (s) => {
          const outcome = optimizer(s.request, s.facts);
          assert.notEqual(outcome.status, 'FAILURE', outcome.detail);
          if (outcome.status === 'SUCCESS') assert.deepEqual(independentViolations(s, outcome), []);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
