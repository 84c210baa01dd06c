import assert from 'node:assert/strict';
import { loadOptimizer, optimize, type Optimizer, type Outcome, type Solve } from '../../src/optimizer/engine.ts';
import { checkOrders } from '../../src/optimizer/checks.ts';
import { drift, prepare, type Problem } from '../../src/optimizer/problem.ts';
import { BD1, EQ1, EQ2, FACTS, US1, optimizerRequest, storeFacts, withRate } from './fixtures.ts';

// The optimizer engine with the real solver, on requests small enough to work out by hand
// (docs/adr/0020-optimizer-model.md). FACTS: EQ1 at 100 and EQ2 at 30 (EQUITY), BD1 at 50 (FIXED_INCOME).

/** Orders as ISIN → shares. */
const shares = (outcome: Outcome) => Object.fromEntries(Object.entries(outcome.orders).map(([isin, order]) => [isin, order.shares]));

function problemOf(request: Parameters<Optimizer>[0], facts = FACTS): Problem {
  const prepared = prepare(request, facts);
  assert.ok(prepared.problem, prepared.outcome?.detail);
  return prepared.problem;
}

describe('optimizer engine', () => {
  let optimizer: Optimizer;
  before(async () => {
    optimizer = await loadOptimizer();
  });

  describe('SUCCESS', () => {
    it('keeps an asset class within its upper bound when the model portfolio wants more', () => {
      // V = 10,000. The model wants 8,000 in EQ1 but EQUITY may hold 0.6 × 10,000 = 6,000: 60 shares;
      // BD1's 2,000 are 40 shares.
      const request = optimizerRequest({
        holdings: { $EUR: 10_000 },
        model_portfolio: { [EQ1]: 0.8, [BD1]: 0.2 },
        asset_class_bands: { EQUITY: [0, 0.6], FIXED_INCOME: [0, 1] },
      });
      const outcome = optimizer(request, FACTS);
      assert.equal(outcome.status, 'SUCCESS');
      assert.deepEqual(shares(outcome), { [EQ1]: 60, [BD1]: 40 });
      assert.equal(outcome.is_recommended, true);
      assert.deepEqual(outcome.orders[EQ1], { shares: 60, expected_share_price: 100, expected_transaction_cost: 0 });
      // Without the band the model portfolio is met exactly.
      assert.deepEqual(shares(optimizer({ ...request, asset_class_bands: {} }, FACTS)), { [EQ1]: 80, [BD1]: 40 });
    });

    it('keeps the cash buffer', () => {
      // 5% of 10,000 stays in cash: 9,500 buy 95 shares of EQ1 (100 without the buffer).
      const request = optimizerRequest({ holdings: { $EUR: 10_000 }, model_portfolio: { [EQ1]: 1 }, cash_buffer: 0.05 });
      assert.deepEqual(shares(optimizer(request, FACTS)), { [EQ1]: 95 });
      assert.deepEqual(shares(optimizer({ ...request, cash_buffer: 0 }, FACTS)), { [EQ1]: 100 });
    });

    it('frees the divest amount exactly, and the cash buffer of what stays invested on top', () => {
      // V = 10,000, D = 2,500: selling 25 shares leaves W = 7,500 in EQ1 and 2,500 in cash.
      const request = optimizerRequest({ holdings: { [EQ1]: 100 }, model_portfolio: { [EQ1]: 1 }, divest_amount: 2500 });
      const outcome = optimizer(request, FACTS);
      assert.deepEqual(shares(outcome), { [EQ1]: -25 });
      assert.equal(outcome.is_recommended, true);
      // A 2% buffer of W = 7,500 is 150 more: 2,650 needs 26.5 shares, so 27 are sold.
      assert.deepEqual(shares(optimizer({ ...request, cash_buffer: 0.02 }, FACTS)), { [EQ1]: -27 });
    });

    it('sells everything for a divest amount of 1e100, a fractional holding included', () => {
      const request = optimizerRequest({
        holdings: { [EQ1]: 10, [BD1]: 7.5, $EUR: 100 },
        model_portfolio: { [EQ1]: 0.6, [BD1]: 0.4 },
        asset_class_bands: { EQUITY: [0.5, 0.7] },
        divest_amount: 1e100,
        transaction_cost_bps: 10,
      });
      const outcome = optimizer(request, FACTS);
      assert.equal(outcome.status, 'SUCCESS');
      assert.equal(outcome.is_recommended, true);
      // Costs: 0.1% of 1,000 and of 375 (0.375, to the even cent).
      assert.deepEqual(outcome.orders, {
        [EQ1]: { shares: -10, expected_share_price: 100, expected_transaction_cost: 1 },
        [BD1]: { shares: -7.5, expected_share_price: 50, expected_transaction_cost: 0.38 },
      });
      // Any amount at least what a sale of everything frees (100 + 1,375 × 0.999) means the same.
      assert.deepEqual(optimizer({ ...request, divest_amount: 1473.63 }, FACTS).orders, outcome.orders);
    });

    it('orders whole shares unless fractional shares are allowed', () => {
      // Target 500 at 30 a share: 17 shares (510, 10 off) beat 16 (480, 20 off); fractional:
      // 16.666666…, a buy rounded down to 6 decimals.
      const request = optimizerRequest({ holdings: { $EUR: 1000 }, model_portfolio: { [EQ2]: 0.5 } });
      assert.deepEqual(shares(optimizer(request, FACTS)), { [EQ2]: 17 });
      assert.deepEqual(shares(optimizer({ ...request, fractional_shares: true }, FACTS)), { [EQ2]: 16.666666 });
    });

    it('pays transaction costs from the cash', () => {
      // 1% costs: 10 shares would need 1,010 of the 1,000; 9 cost 909. Fractional: 1,000 / 101.
      const request = optimizerRequest({ holdings: { $EUR: 1000 }, model_portfolio: { [EQ1]: 1 }, transaction_cost_bps: 100 });
      assert.deepEqual(optimizer(request, FACTS).orders, { [EQ1]: { shares: 9, expected_share_price: 100, expected_transaction_cost: 9 } });
      assert.deepEqual(optimizer({ ...request, fractional_shares: true }, FACTS).orders, {
        [EQ1]: { shares: 9.90099, expected_share_price: 100, expected_transaction_cost: 9.9 },
      });
      assert.deepEqual(shares(optimizer({ ...request, transaction_cost_bps: 0 }, FACTS)), { [EQ1]: 10 });
    });

    it('sells an instrument outside the model portfolio and never buys one', () => {
      const outcome = optimizer(optimizerRequest({ holdings: { [BD1]: 10, $EUR: 500 }, model_portfolio: { [EQ1]: 1 } }), FACTS);
      assert.deepEqual(shares(outcome), { [BD1]: -10, [EQ1]: 10 });
    });

    it('sells whole shares of a fractional holding unless it sells all of it', () => {
      // 10.5 shares at 100, V = 1,050. D = 300: W = 750 is 7.5 shares, 3 sold. D = 1,000: 10 sold,
      // the half share stays (its 50 are W). D = 1,050: everything.
      const request = optimizerRequest({ holdings: { [EQ1]: 10.5 }, model_portfolio: { [EQ1]: 1 } });
      assert.deepEqual(shares(optimizer({ ...request, divest_amount: 300 }, FACTS)), { [EQ1]: -3 });
      assert.deepEqual(shares(optimizer({ ...request, divest_amount: 1000 }, FACTS)), { [EQ1]: -10 });
      assert.deepEqual(shares(optimizer({ ...request, divest_amount: 1050 }, FACTS)), { [EQ1]: -10.5 });
    });

    it('recommends orders when the drift exceeds the threshold or the cash constraint is unmet before trading', () => {
      // Drift ½(|0.48 − 0.5| + |0.5 − 0.5| + |0.02 − 0|) = 0.02.
      const request = optimizerRequest({
        holdings: { [EQ1]: 48, [BD1]: 100, $EUR: 200 },
        model_portfolio: { [EQ1]: 0.5, [BD1]: 0.5 },
        rebalancing_threshold: 0.05,
      });
      assert.equal(drift(problemOf(request)), 0.02);
      const small = optimizer(request, FACTS);
      assert.deepEqual(shares(small), { [EQ1]: 2 });
      assert.equal(small.is_recommended, false);
      assert.equal(optimizer({ ...request, rebalancing_threshold: 0.01 }, FACTS).is_recommended, true);
      // A 3% buffer needs 300 in cash, 100 more than held: a sale of 100 (2 BD1 or 1 EQ1, equally
      // far from the targets) is recommended whatever the drift.
      const buffer = optimizer({ ...request, cash_buffer: 0.03 }, FACTS);
      assert.ok([JSON.stringify({ [BD1]: -2 }), JSON.stringify({ [EQ1]: -1 })].includes(JSON.stringify(shares(buffer))), JSON.stringify(buffer));
      assert.equal(buffer.is_recommended, true);
    });

    it('counts cash of other currencies at its rate, and needs no rate for none of it', () => {
      // V = 1,000 + 500 USD × 0.9 = 1,450: 14 shares of EQ1 at 100.
      const facts = withRate(FACTS, '$USD', '0.9');
      const outcome = optimizer(optimizerRequest({ holdings: { $EUR: 1000, $USD: 500 }, model_portfolio: { [EQ1]: 1 } }), facts);
      assert.deepEqual(shares(outcome), { [EQ1]: 14 });
      assert.deepEqual(shares(optimizer(optimizerRequest({ holdings: { $EUR: 1000, $USD: 0 }, model_portfolio: { [EQ1]: 1 } }), FACTS)), { [EQ1]: 10 });
    });
  });

  describe('INFEASIBLE', () => {
    it('names an asset class band that cannot be met', () => {
      // EQ1 is the only EQUITY instrument, held 0 times and not in the model portfolio: it cannot be bought.
      const outcome = optimizer(
        optimizerRequest({ holdings: { $EUR: 1000, [EQ1]: 0 }, model_portfolio: { [BD1]: 1 }, asset_class_bands: { EQUITY: [0.5, 1] } }),
        FACTS,
      );
      assert.deepEqual(outcome, {
        status: 'INFEASIBLE',
        is_recommended: false,
        orders: {},
        detail: 'asset class EQUITY lower bound 0.5 cannot be met: at least 500.00 EUR needed, short by 500.00 EUR (whole shares)',
      });
    });

    it('names a band whose class has no instrument', () => {
      const outcome = optimizer(
        optimizerRequest({ holdings: { $EUR: 1000 }, model_portfolio: { [EQ1]: 1 }, asset_class_bands: { COMMODITY: [0.1, 0.3] } }),
        FACTS,
      );
      assert.equal(outcome.status, 'INFEASIBLE');
      assert.equal(outcome.detail, 'asset class COMMODITY lower bound 0.1 cannot be met: at least 100.00 EUR needed, short by 100.00 EUR (whole shares)');
    });

    it('names the constraint given up the least when the cash buffer and a band conflict', () => {
      // 10 EQ1 (1,000), EQUITY ≥ 950 and 100 in cash: 9 shares miss the band by 50, 10 the cash by 100.
      const outcome = optimizer(
        optimizerRequest({ holdings: { [EQ1]: 10 }, model_portfolio: { [EQ1]: 1 }, asset_class_bands: { EQUITY: [0.95, 1] }, cash_buffer: 0.1 }),
        FACTS,
      );
      assert.equal(outcome.status, 'INFEASIBLE');
      assert.equal(outcome.detail, 'asset class EQUITY lower bound 0.95 cannot be met: at least 950.00 EUR needed, short by 50.00 EUR (whole shares)');
    });

    it('names the cash buffer and the divest amount when the cash cannot be freed', () => {
      // All in cash after 1% costs: selling the 10 EQ1 frees 990 of the 1,000 needed.
      const request = optimizerRequest({ holdings: { [EQ1]: 10 }, model_portfolio: { [EQ1]: 1 }, cash_buffer: 1, transaction_cost_bps: 100 });
      assert.equal(optimizer(request, FACTS).detail, 'cash buffer 1 cannot be met: 1000.00 EUR needed in cash after trades, short by 10.00 EUR (whole shares)');
      assert.equal(
        optimizer({ ...request, divest_amount: 100 }, FACTS).detail,
        'cash buffer 1 and divest amount 100.00 EUR cannot be met: 1000.00 EUR needed in cash after trades, short by 10.00 EUR (whole shares)',
      );
    });
  });

  describe('NOT_OPTIMIZED', () => {
    it('answers NOT_OPTIMIZED when the holdings match the policy', () => {
      const outcome = optimizer(
        optimizerRequest({ holdings: { [EQ1]: 50, [BD1]: 100 }, model_portfolio: { [EQ1]: 0.5, [BD1]: 0.5 }, transaction_cost_bps: 5 }),
        FACTS,
      );
      assert.deepEqual(outcome, { status: 'NOT_OPTIMIZED', is_recommended: false, orders: {}, detail: 'holdings already match the policy (drift 0.00%)' });
    });

    it('answers NOT_OPTIMIZED for an empty portfolio', () => {
      const outcome = optimizer(optimizerRequest({ model_portfolio: { [EQ1]: 1 } }), FACTS);
      assert.deepEqual(outcome, { status: 'NOT_OPTIMIZED', is_recommended: false, orders: {}, detail: 'the portfolio is empty (value 0)' });
    });

    it('answers NOT_OPTIMIZED when no whole share brings the holdings closer', () => {
      // Target 5 in EQ1 at 100 a share: a share would be 95 off instead of 5.
      const outcome = optimizer(optimizerRequest({ holdings: { $EUR: 1000, [EQ1]: 0 }, model_portfolio: { [EQ1]: 0.005 } }), FACTS);
      assert.equal(outcome.status, 'NOT_OPTIMIZED');
    });
  });

  describe('FAILURE', () => {
    const failure = (detail: string): Outcome => ({ status: 'FAILURE', is_recommended: false, orders: {}, detail });

    it('names an ISIN without a price', () => {
      const request = optimizerRequest({ holdings: { $EUR: 1000 }, model_portfolio: { [EQ1]: 0.5, [US1]: 0.5 } });
      assert.deepEqual(optimizer(request, FACTS), failure(`no price for ${US1}`));
      assert.deepEqual(optimizer(request, storeFacts([EQ1, 100, 'EQUITY'], [US1, null, 'EQUITY'])), failure(`no price for ${US1}`));
      assert.deepEqual(optimizer(request, storeFacts([EQ1, 100, 'EQUITY'], [US1, 0, 'EQUITY'])), failure(`no price for ${US1}`));
    });

    it('refuses a price in another currency than the base currency', () => {
      const request = optimizerRequest({ holdings: { $EUR: 1000 }, model_portfolio: { [US1]: 1 } });
      assert.deepEqual(optimizer(request, storeFacts([US1, 200, 'EQUITY', 'USD'])), failure(`no USD/EUR exchange rate (needed for ${US1})`));
    });

    it('refuses a bad policy', () => {
      const request = optimizerRequest({ holdings: { $EUR: 1000 }, model_portfolio: { [EQ1]: 0.7, [BD1]: 0.3 } });
      assert.deepEqual(
        optimizer({ ...request, asset_class_bands: { EQUITY: [0.8, 0.6] } }, FACTS),
        failure('asset class EQUITY band has its lower bound 0.8 above its upper bound 0.6'),
      );
      assert.deepEqual(optimizer({ ...request, model_portfolio: { [EQ1]: 0.7, [BD1]: 0.4 } }, FACTS), failure('model portfolio weights sum to 1.1, above 1'));
      // 0.1 + 0.2 + 0.7 is 1 exactly (not 1.0000000000000002).
      assert.equal(optimizer({ ...request, model_portfolio: { [EQ1]: 0.1, [EQ2]: 0.2, [BD1]: 0.7 } }, FACTS).status, 'SUCCESS');
    });

    it('refuses a negative holding', () => {
      const outcome = optimizer(optimizerRequest({ holdings: { [EQ1]: -1, $EUR: 1000 }, model_portfolio: { [EQ1]: 1 } }), FACTS);
      assert.deepEqual(outcome, failure(`holding of ${EQ1} is -1 shares; short positions are not kept`));
    });

    describe('with a given solver', () => {
      const request = optimizerRequest({ holdings: { $EUR: 1000 }, model_portfolio: { [EQ1]: 1 } });
      const answering =
        (status: string, values: Record<string, number>, solved = true): Solve =>
        () => ({ status, solved, value: (column) => values[column] ?? 0 });

      it('refuses an answer that breaks a constraint', () => {
        // 11 shares of EQ1 cost 1,100 of the 1,000.
        const outcome = optimize(answering('Optimal', { q0: 11 }), request, FACTS);
        assert.deepEqual(outcome, failure('solver answer violates cash after trades -100.00 EUR is below the 0.00 EUR required'));
      });

      it('takes the best answer found before the time limit, checked like any other', () => {
        assert.deepEqual(shares(optimize(answering('Time limit reached', { q0: 9 }), request, FACTS, 1)), { [EQ1]: 9 });
        assert.deepEqual(
          optimize(answering('Time limit reached', {}, false), request, FACTS, 1),
          failure('solver found no answer within its time limit of 1 s'),
        );
      });

      it('answers FAILURE when the solver fails', () => {
        assert.deepEqual(optimize(answering('Solve error', {}), request, FACTS), failure('solver answered Solve error'));
        const throwing: Solve = () => {
          throw new Error('Unable to read LP model\nmore');
        };
        assert.deepEqual(optimize(throwing, request, FACTS), failure('solver error: Unable to read LP model'));
      });
    });
  });

  describe('the checker', () => {
    const request = optimizerRequest({ holdings: { [EQ1]: 10, [BD1]: 2.5, $EUR: 100 }, model_portfolio: { [EQ1]: 0.5, [EQ2]: 0.5 }, cash_buffer: 0.1 });

    it('accepts sound orders', () => {
      // V = 1,225; 10% buffer: 122.50. Selling 2 EQ1 and buying 6 EQ2 leaves 100 + 200 − 180 = 120 … too little;
      // buying 5 EQ2 leaves 150.
      const problem = problemOf(request);
      assert.deepEqual(
        checkOrders(
          problem,
          new Map([
            [EQ1, -2],
            [EQ2, 5],
          ]),
        ),
        [],
      );
      assert.deepEqual(checkOrders(problem, new Map([[BD1, -2.5]])), []);
      assert.deepEqual(
        checkOrders(
          problem,
          new Map([
            [EQ1, -2],
            [EQ2, 6],
          ]),
        ),
        ['cash after trades 120.00 EUR is below the 122.50 EUR required'],
      );
    });

    it('finds short positions, fractions, buys outside the model and unknown ISINs', () => {
      const problem = problemOf({ ...request, cash_buffer: 0 });
      assert.deepEqual(checkOrders(problem, new Map([[EQ1, -11]])), [`${EQ1}: selling 11 of 10 shares leaves a short position`]);
      assert.deepEqual(checkOrders(problem, new Map([[BD1, -1.5]])), [`${BD1}: -1.5 shares is not a whole number`]);
      assert.deepEqual(checkOrders(problem, new Map([[BD1, 1]])), [`${BD1} is bought but not in the model portfolio`]);
      assert.deepEqual(checkOrders(problem, new Map([[US1, 1]])), [`${US1} is not an instrument of the request`]);
    });

    it('checks the bands within one cent', () => {
      const problem = problemOf({ ...request, cash_buffer: 0, asset_class_bands: { EQUITY: [0.5, 0.8] } });
      // EQUITY holds 1,000 of V = 1,225; at most 980 are allowed.
      assert.deepEqual(checkOrders(problem, new Map()), ['asset class EQUITY at 1000.00 EUR is above its upper bound 0.8 (980.00 EUR)']);
      assert.deepEqual(checkOrders(problem, new Map([[EQ1, -1]])), []);
      // One EQ1 at 1 and 1 in cash: EQUITY at 1.00 passes a lower bound of 1.01 (one cent), not of 1.02.
      const cent = (lower: number) =>
        problemOf(optimizerRequest({ holdings: { [EQ1]: 1, $EUR: 1 }, asset_class_bands: { EQUITY: [lower, 1] } }), storeFacts([EQ1, 1, 'EQUITY']));
      assert.deepEqual(checkOrders(cent(0.505), new Map()), []);
      assert.deepEqual(checkOrders(cent(0.51), new Map()), ['asset class EQUITY at 1.00 EUR is below its lower bound 0.51 (1.02 EUR)']);
    });
  });
});
