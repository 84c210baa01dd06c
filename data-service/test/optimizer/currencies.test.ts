import assert from 'node:assert/strict';
import { loadOptimizer, type Optimizer, type OptimizerRequest, type Outcome } from '../../src/optimizer/engine.ts';
import { checkOrders } from '../../src/optimizer/checks.ts';
import { conversions } from '../../src/optimizer/conversions.ts';
import { withRates } from '../../src/optimizer/instruments.ts';
import { prepare, type InstrumentFacts, type Problem } from '../../src/optimizer/problem.ts';
import { buildProgram, resultOrders } from '../../src/optimizer/program.ts';
import type { RateFact } from '../../src/optimizer/rates.ts';
import { referenceRates } from '../../src/optimizer/reference-rates.ts';
import type { FxRates } from '../../src/fx/convert.ts';
import { parseDecimal } from '@platform/shared';
import { EQ1, FACTS, US1, optimizerRequest, storeFacts, withRate } from './fixtures.ts';

// A EUR portfolio trading instruments priced in US dollars (docs/adr/0020-optimizer-model.md):
// US1 at 200 USD and USD at 0.9 EUR, so p = 180 EUR; EQ1 at 100 EUR. Worked out by hand.

const US2 = 'US5949181045';
/** US1 at 200 USD, US2 at 50 USD, EQ1 at 100 EUR; USD at 0.9 EUR for instruments and cash. */
function dollarFacts(rate: string | RateFact = '0.9'): Map<string, InstrumentFacts> {
  let facts = storeFacts([EQ1, 100, 'EQUITY'], [US1, 200, 'EQUITY', 'USD'], [US2, 50, 'EQUITY', 'USD']);
  for (const key of [US1, US2, '$USD']) facts = withRate(facts, key, rate);
  return facts;
}

function problemOf(request: OptimizerRequest, facts = dollarFacts()): Problem {
  const prepared = prepare(request, facts);
  assert.ok(prepared.problem, prepared.outcome?.detail);
  return prepared.problem;
}

const money = (m: { toFixed: (n: number) => string }) => m.toFixed(2);
const orderMap = (orders: Record<string, number>) => new Map(Object.entries(orders));

describe('optimizer with other currencies', () => {
  let optimizer: Optimizer;
  before(async () => {
    optimizer = await loadOptimizer();
  });

  describe('prepare', () => {
    it('values instruments and cash of other currencies in the base currency', () => {
      // p = 200 × 0.9 = 180; C = 1,000 + 500 × 0.9 = 1,450; V = 1,450 + 2 × 180 = 1,810.
      const problem = problemOf(optimizerRequest({ holdings: { $EUR: 1000, $USD: 500, [US1]: 2 }, model_portfolio: { [US1]: 1 } }));
      const us1 = problem.instruments.find((i) => i.isin === US1)!;
      assert.deepEqual(
        { price: us1.price, localPrice: us1.localPrice, currency: us1.currency, rate: us1.rate },
        { price: 180, localPrice: 200, currency: 'USD', rate: '0.9' },
      );
      assert.equal(money(problem.cash), '1450.00');
      assert.equal(money(problem.value), '1810.00');
      assert.deepEqual(
        problem.foreign.map((f) => [f.currency, money(f.cash)]),
        [['USD', '450.00']],
      );
    });

    it('frees on selling everything the proceeds less both costs, the conversion only on the other currencies', () => {
      // L = C + (1 − t) Σ p h − f Σ_USD p h = 100 + 0.99 × (1,800 + 1,000) − 0.02 × 1,800 = 2,836.
      const request = optimizerRequest({
        holdings: { $EUR: 100, [US1]: 10, [EQ1]: 10 },
        divest_amount: 1e100,
        transaction_cost_bps: 100,
        fx_cost_bps: 200,
      });
      const problem = problemOf(request);
      assert.equal(problem.sellEverything, true);
      assert.equal(money(problem.divest), '2836.00');
      assert.deepEqual(checkOrders(problem, orderMap({ [US1]: -10, [EQ1]: -10 })), []);
    });

    it('refuses a missing rate, naming the pair and what needs it', () => {
      const facts = storeFacts([US1, 200, 'EQUITY', 'USD']);
      const outcome = prepare(optimizerRequest({ holdings: { $EUR: 1000, $GBP: 10 }, model_portfolio: { [US1]: 1 } }), facts).outcome;
      assert.equal(outcome?.status, 'FAILURE');
      assert.equal(outcome?.detail, `no GBP/EUR exchange rate (needed for $GBP); no USD/EUR exchange rate (needed for ${US1})`);
    });

    it("refuses a stale rate with the reader's words", () => {
      const stale: RateFact = { refusal: 'stale', detail: 'USD/EUR rate of 2025-03-01 is older than 5 days on 2025-03-14' };
      const outcome = prepare(optimizerRequest({ holdings: { $EUR: 1000, $USD: 5 }, model_portfolio: { [US1]: 0.5, [US2]: 0.5 } }), dollarFacts(stale)).outcome;
      assert.equal(outcome?.detail, `USD/EUR rate of 2025-03-01 is older than 5 days on 2025-03-14 (needed for $USD, ${US1}, ${US2})`);
    });

    it('refuses a rate that is not a positive decimal, never taking 1', () => {
      for (const rate of ['0', '1e3', '-0.9', 'NaN', '']) {
        const outcome = prepare(optimizerRequest({ holdings: { $EUR: 1000 }, model_portfolio: { [US1]: 1 } }), dollarFacts(rate)).outcome;
        assert.match(outcome?.detail ?? '', /^USD\/EUR exchange rate .* of 2025-03-13 is not a positive decimal \(needed for US0378331005\)$/, rate);
      }
    });

    it('refuses an exchange cost outside [0, 10000) bps', () => {
      for (const bps of [-1, 10_000, Number.NaN]) {
        const outcome = prepare(optimizerRequest({ holdings: { $EUR: 1000 }, fx_cost_bps: bps }), FACTS).outcome;
        assert.equal(outcome?.detail, `exchange cost of ${bps} bps is not between 0 and 10000`);
      }
    });
  });

  describe('conversions and checks', () => {
    it('charges f on what buys need beyond the cash of their currency', () => {
      // a = 1,000 USD × 0.9 = 900. 20 × 180 = 3,600 bought: 2,700 converted, 0.5 % of it 13.50.
      const problem = problemOf(optimizerRequest({ holdings: { $EUR: 10_000, $USD: 1000 }, model_portfolio: { [US1]: 1 }, fx_cost_bps: 50 }));
      const big = conversions(problem, orderMap({ [US1]: 20 }));
      assert.equal(money(big.converted.get('USD')!), '2700.00');
      assert.equal(big.cost.toFixed(), '13.5');
      // 5 × 180 = 900: the dollars held pay for it all, nothing converted.
      assert.equal(conversions(problem, orderMap({ [US1]: 5 })).cost.toFixed(), '0');
      // Net sale proceeds are converted: 2 × 180 = 360 → 1.80.
      assert.equal(conversions(problem, orderMap({ [US1]: -2 })).cost.toFixed(), '1.8');
    });

    it('counts the conversion in the cash constraint to the cent', () => {
      // 20 × 180 = 3,600 and 1 % of it 36: 3,636 EUR is exactly enough, a cent and a half less is not.
      const request = optimizerRequest({ holdings: { $EUR: 3636 }, model_portfolio: { [US1]: 1 }, fx_cost_bps: 100 });
      assert.deepEqual(checkOrders(problemOf(request), orderMap({ [US1]: 20 })), []);
      const short = problemOf({ ...request, holdings: { $EUR: 3635.985 } });
      assert.deepEqual(checkOrders(short, orderMap({ [US1]: 20 })), ['cash after trades -0.02 EUR is below the 0.00 EUR required']);
      // Without the exchange cost the same cash is 36 EUR more than enough.
      assert.deepEqual(checkOrders(problemOf({ ...request, holdings: { $EUR: 3635.985 }, fx_cost_bps: 0 }), orderMap({ [US1]: 20 })), []);
    });

    it('shares a currency’s cost among the orders that make it, by value', () => {
      // Buys of 10 US1 (1,800) and 36 US2 (1,620) with no dollars held: 3,420 converted, 1 % = 34.20,
      // 18.00 and 16.20 of it; EQ1 in EUR has no exchange fields.
      const problem = problemOf(optimizerRequest({ holdings: { $EUR: 10_000 }, model_portfolio: { [US1]: 0.4, [US2]: 0.3, [EQ1]: 0.3 }, fx_cost_bps: 100 }));
      const orders = resultOrders(problem, orderMap({ [US1]: 10, [US2]: 36, [EQ1]: 5 }));
      assert.deepEqual(orders[US1], {
        shares: 10,
        expected_share_price: 180,
        expected_transaction_cost: 0,
        currency: 'USD',
        expected_share_price_in_currency: 200,
        fx_rate: 0.9,
        expected_fx_cost: 18,
      });
      assert.equal(orders[US2]?.expected_fx_cost, 16.2);
      assert.deepEqual(orders[EQ1], { shares: 5, expected_share_price: 100, expected_transaction_cost: 0 });
    });

    it('writes a conversion column per other currency only when converting costs something', () => {
      const request = optimizerRequest({ holdings: { $EUR: 10_000 }, model_portfolio: { [US1]: 0.5, [EQ1]: 0.5 }, fx_cost_bps: 100 });
      assert.match(buildProgram(problemOf(request)).text, /yb0: \+ 1 y0 - 180 q\d+ >= 0\n ys0: \+ 1 y0 \+ 180 q\d+ >= 0/);
      assert.doesNotMatch(buildProgram(problemOf({ ...request, fx_cost_bps: 0 })).text, /y0/);
      assert.doesNotMatch(buildProgram(problemOf({ ...request, model_portfolio: { [EQ1]: 1 } })).text, /y0/);
    });
  });

  describe('solved', () => {
    const buy = (outcome: Outcome) => outcome.orders[US1];

    it('buys dollar instruments at the converted price, with the rate and the price in dollars', () => {
      // 10,000 EUR buy 55 shares at 180 (9,900); 56 would cost 10,080.
      const outcome = optimizer(optimizerRequest({ holdings: { $EUR: 10_000 }, model_portfolio: { [US1]: 1 } }), dollarFacts());
      assert.equal(outcome.status, 'SUCCESS');
      assert.deepEqual(buy(outcome), {
        shares: 55,
        expected_share_price: 180,
        expected_transaction_cost: 0,
        currency: 'USD',
        expected_share_price_in_currency: 200,
        fx_rate: 0.9,
        expected_fx_cost: 0,
      });
    });

    it('raises the cost by exactly the exchange cost on the converted amount, dollars held converted last', () => {
      // 1 %: 55 shares (9,900) convert 9,900 and cost 99.00; cash after 10,000 − 9,900 − 99 = 1 ≥ 0.
      const request = optimizerRequest({ holdings: { $EUR: 10_000 }, model_portfolio: { [US1]: 1 }, fx_cost_bps: 100 });
      assert.deepEqual([buy(optimizer(request, dollarFacts()))?.shares, buy(optimizer(request, dollarFacts()))?.expected_fx_cost], [55, 99]);
      // The same value with 1,000 USD (900 EUR) of it in dollars: only 9,000 converted, 90.00.
      const dollars = optimizer({ ...request, holdings: { $EUR: 9100, $USD: 1000 } }, dollarFacts());
      assert.deepEqual([buy(dollars)?.shares, buy(dollars)?.expected_fx_cost], [55, 90]);
    });

    it('takes the reference data’s cross rate, and answers FAILURE naming the pair when its rate is missing or too old', async () => {
      const request = optimizerRequest({ holdings: { $EUR: 10_000 }, model_portfolio: { [US1]: 1 }, requested_at: '2026-03-10T08:00:00Z' });
      const store = storeFacts([US1, 200, 'EQUITY', 'USD']);
      // 1 EUR = 1.25 USD on Friday 6 March: 1 USD = 0.8 EUR on Tuesday 10 March, 4 days later.
      const usd: FxRates = new Map([['USD', [{ date: '2026-03-06', rate: parseDecimal('1.25') }]]]);
      const priced = prepare(
        request,
        await withRates(
          store,
          request,
          referenceRates(async () => usd, 5),
        ),
      );
      assert.deepEqual(
        priced.problem?.instruments.map((i) => [i.price, i.rate]),
        [[160, '0.8']],
      );
      const none = await withRates(
        store,
        request,
        referenceRates(async () => new Map(), 5),
      );
      assert.equal(optimizer(request, none).detail, `no EUR/USD rate on or before 2026-03-10 (for USD/EUR) (needed for ${US1})`);
      const old = await withRates(
        store,
        request,
        referenceRates(async () => usd, 3),
      );
      assert.equal(optimizer(request, old).detail, `EUR/USD rate of 2026-03-06 is older than 3 days on 2026-03-10 (for USD/EUR) (needed for ${US1})`);
      assert.equal(optimizer(request, old).status, 'FAILURE');
    });
  });

  describe('the facts reader', () => {
    it('asks for the other currencies of the instruments and of non-zero cash, on the request’s day, and attaches them', async () => {
      const asked: unknown[] = [];
      const request = optimizerRequest({ holdings: { $EUR: 5, $USD: 10, $CHF: 0, [US1]: 1 }, model_portfolio: { [EQ1]: 1 } });
      const facts = await withRates(storeFacts([EQ1, 100, 'EQUITY'], [US1, 200, 'EQUITY', 'USD']), request, async (base, currencies, asOf) => {
        asked.push([base, currencies, asOf]);
        return new Map([['USD', { rate: '0.9', date: '2025-03-13' }]]);
      });
      assert.deepEqual(asked, [['EUR', ['USD'], '2025-03-14']]);
      assert.deepEqual(facts.get(US1)?.toBase, { rate: '0.9', date: '2025-03-13' });
      assert.deepEqual(facts.get('$USD'), { price: 1, currency: 'USD', assetClass: null, toBase: { rate: '0.9', date: '2025-03-13' } });
      assert.equal(facts.get(EQ1)?.toBase, undefined);
      assert.equal(facts.has('$CHF'), false);
    });

    it('does not ask for rates when everything is in the base currency', async () => {
      let asked = 0;
      const request = optimizerRequest({ holdings: { $EUR: 5 }, model_portfolio: { [EQ1]: 1 } });
      await withRates(FACTS, request, async () => {
        asked += 1;
        return new Map();
      });
      assert.equal(asked, 0);
    });
  });
});
